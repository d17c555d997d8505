package approval

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agnara-go/agnara/policy"
)

// SignIn is an approver signed in to the approval inbox (package
// approval/inbox). The inbox keeps its sign-ins in the approval store it
// decides in, so that every inbox instance sharing the store honours a
// sign-in made on any of them and a sign-out on one ends it on all
// (ADR 0052). A SignIn is a plain value; safe for concurrent reading.
type SignIn struct {
	// Approver is who signed in, with the scopes they held at sign-in.
	Approver policy.Principal
	// Expires is when the sign-in ends.
	Expires time.Time
}

// MaxSignIns is the most sign-ins a store keeps: saving one more first
// drops the expired ones, then those that end soonest, so that what
// visitors make the store keep stays bounded.
const MaxSignIns = 10000

// maxSignInKey bounds a sign-in's key: the inbox's digest of its cookie.
const maxSignInKey = 128

func checkSignInKey(key string) error {
	if key == "" || len(key) > maxSignInKey {
		return fmt.Errorf("%w: a sign-in key is 1 to %d bytes", ErrInvalid, maxSignInKey)
	}
	return nil
}

// SaveSignIn records sign-in in under key, which the inbox derives from the
// secret in the approver's cookie (never the secret itself: the database,
// its backups and replicas then hold nothing a browser could present). A
// key already recorded is replaced. The approver must be identified with an
// id and issuer CheckIdentity accepts (ErrInvalid).
func (s *sqlStore) SaveSignIn(ctx context.Context, key string, in SignIn) error {
	if err := checkSignInKey(key); err != nil {
		return err
	}
	p := in.Approver
	if p.IsAnonymous() {
		return fmt.Errorf("%w: an anonymous principal cannot sign in", ErrInvalid)
	}
	if err := checkPrincipal(p, "approver"); err != nil {
		return err
	}
	scopes, err := json.Marshal(p.Scopes())
	if err != nil {
		return s.fail("save sign-in", err)
	}
	return s.update(ctx, "save sign-in", func(tx *sql.Tx, now time.Time) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM inbox_signins WHERE expires_at <= $1 OR id_hash = $2", nanos(now), key); err != nil {
			return s.fail("save sign-in", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM inbox_signins").Scan(&n); err != nil {
			return s.fail("save sign-in", err)
		}
		limit := cmp.Or(s.maxSignIns, MaxSignIns)
		if n >= limit {
			if _, err := tx.ExecContext(ctx, `DELETE FROM inbox_signins WHERE id_hash IN
				(SELECT id_hash FROM inbox_signins ORDER BY expires_at, id_hash LIMIT $1)`, n-limit+1); err != nil {
				return s.fail("save sign-in", err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO inbox_signins (id_hash, approver_id, approver_issuer, scopes, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, key, p.ID(), p.Issuer(), string(scopes), nanos(now), nanos(in.Expires))
		if err != nil {
			return s.fail("save sign-in", err)
		}
		return nil
	})
}

// LoadSignIn returns the sign-in recorded under key, or ErrNotFound. It
// does not judge expiry: the caller compares Expires with its clock.
func (s *sqlStore) LoadSignIn(ctx context.Context, key string) (SignIn, error) {
	if s.closed.Load() {
		return SignIn{}, fmt.Errorf("load sign-in: %w", ErrClosed)
	}
	if err := checkSignInKey(key); err != nil {
		return SignIn{}, err
	}
	var (
		id, issuer, scopes string
		expires            int64
	)
	err := s.db.QueryRowContext(ctx, "SELECT approver_id, approver_issuer, scopes, expires_at FROM inbox_signins WHERE id_hash = $1", key).
		Scan(&id, &issuer, &scopes, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return SignIn{}, fmt.Errorf("sign-in: %w", ErrNotFound)
	}
	if err != nil {
		return SignIn{}, s.fail("load sign-in", err)
	}
	var list []string
	if err := json.Unmarshal([]byte(scopes), &list); err != nil {
		return SignIn{}, s.fail("load sign-in", err)
	}
	return SignIn{Approver: policy.NewPrincipal(id, list).WithIssuer(issuer), Expires: fromNanos(expires)}, nil
}

// EndSignIn forgets the sign-in recorded under key, on every inbox that
// shares the store. Ending one that is not recorded is not an error.
func (s *sqlStore) EndSignIn(ctx context.Context, key string) error {
	if err := checkSignInKey(key); err != nil {
		return err
	}
	return s.update(ctx, "end sign-in", func(tx *sql.Tx, _ time.Time) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM inbox_signins WHERE id_hash = $1", key); err != nil {
			return s.fail("end sign-in", err)
		}
		return nil
	})
}

// CountSignIns returns how many sign-ins the store holds, ended or not
// (expired ones are dropped when the next one is saved).
func (s *sqlStore) CountSignIns(ctx context.Context) (int, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("count sign-ins: %w", ErrClosed)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM inbox_signins").Scan(&n); err != nil {
		return 0, s.fail("count sign-ins", err)
	}
	return n, nil
}
