package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agnara-go/agnara/policy"
)

// Connection is one person's grant at a third party, kept for a gateway
// that acts for them there (package gateway, credentials "consent"): the
// tokens the third party's authorization server issued when the person
// signed in, sealed by the gateway (encrypted and bound to the person and
// the upstream), which the store keeps without reading. Keeping it in the
// approval store lets every gateway instance sharing the store use a grant
// made on any of them, and a revocation on one end it on all. A Connection
// is a plain value.
type Connection struct {
	// Principal is whose grant it is (id and issuer; scopes are not
	// kept).
	Principal policy.Principal
	// Upstream names the server the grant is for.
	Upstream string
	// ClientID is the OAuth client (the person's MCP client) the person
	// allowed to use the grant: consent is given per client. "" when the
	// caller's token names none.
	ClientID string
	// Scopes are the scopes the grant holds at the third party, for the
	// person to read.
	Scopes []string
	// Sealed is the grant, sealed by the gateway: at most MaxSealed bytes.
	Sealed []byte
	// CreatedAt is when the person first connected; UpdatedAt when the
	// grant was last saved (a refresh saves it again).
	CreatedAt, UpdatedAt time.Time
}

// MaxSealed bounds a Connection's sealed grant.
const MaxSealed = 16 << 10

// MaxConnections is the most connections a store keeps; saving a new one
// past it is refused (ErrInvalid).
const MaxConnections = 100000

func checkConnection(p policy.Principal, upstream, clientID string) error {
	if len(clientID) > 256 || strings.ContainsRune(clientID, 0) {
		return fmt.Errorf("%w: a connection's client id is at most 256 bytes without NUL", ErrInvalid)
	}
	if p.IsAnonymous() {
		return fmt.Errorf("%w: an anonymous principal has no connections", ErrInvalid)
	}
	if err := checkPrincipal(p, "connection's principal"); err != nil {
		return err
	}
	if upstream == "" || len(upstream) > 128 || strings.ContainsRune(upstream, 0) {
		return fmt.Errorf("%w: a connection's upstream is 1 to 128 bytes without NUL", ErrInvalid)
	}
	return nil
}

// SaveConnection records c, replacing the grant the same principal held
// for the same upstream and client (keeping when it was first made).
func (s *sqlStore) SaveConnection(ctx context.Context, c Connection) error {
	if err := checkConnection(c.Principal, c.Upstream, c.ClientID); err != nil {
		return err
	}
	if len(c.Sealed) == 0 || len(c.Sealed) > MaxSealed {
		return fmt.Errorf("%w: a sealed grant is 1 to %d bytes", ErrInvalid, MaxSealed)
	}
	scopes := strings.Join(c.Scopes, " ")
	if err := checkText("scopes", scopes, 1024); err != nil {
		return err
	}
	p := c.Principal
	return s.update(ctx, "save connection", func(tx *sql.Tx, now time.Time) error {
		res, err := tx.ExecContext(ctx, `UPDATE connections SET sealed = $1, scopes = $2, updated_at = $3
			WHERE principal_id = $4 AND principal_issuer = $5 AND upstream = $6 AND client_id = $7`,
			c.Sealed, scopes, nanos(now), p.ID(), p.Issuer(), c.Upstream, c.ClientID)
		if err != nil {
			return s.fail("save connection", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		var count int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM connections").Scan(&count); err != nil {
			return s.fail("save connection", err)
		}
		if count >= MaxConnections {
			return fmt.Errorf("%w: the store keeps at most %d connections", ErrInvalid, MaxConnections)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO connections (principal_id, principal_issuer, upstream, client_id, scopes, sealed, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, p.ID(), p.Issuer(), c.Upstream, c.ClientID, scopes, c.Sealed, nanos(now)); err != nil {
			return s.fail("save connection", err)
		}
		return nil
	})
}

// LoadConnection returns p's grant for upstream through client clientID,
// or ErrNotFound.
func (s *sqlStore) LoadConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (Connection, error) {
	if s.closed.Load() {
		return Connection{}, fmt.Errorf("load connection: %w", ErrClosed)
	}
	if err := checkConnection(p, upstream, clientID); err != nil {
		return Connection{}, err
	}
	row := s.db.QueryRowContext(ctx, `SELECT principal_id, principal_issuer, upstream, client_id, scopes, sealed, created_at, updated_at
		FROM connections WHERE principal_id = $1 AND principal_issuer = $2 AND upstream = $3 AND client_id = $4`, p.ID(), p.Issuer(), upstream, clientID)
	c, err := scanConnection(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Connection{}, fmt.Errorf("connection: %w", ErrNotFound)
	}
	if err != nil {
		return Connection{}, s.fail("load connection", err)
	}
	return c, nil
}

// ListConnections returns p's grants, by upstream and client.
func (s *sqlStore) ListConnections(ctx context.Context, p policy.Principal) ([]Connection, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("list connections: %w", ErrClosed)
	}
	if err := checkConnection(p, "-", ""); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT principal_id, principal_issuer, upstream, client_id, scopes, sealed, created_at, updated_at
		FROM connections WHERE principal_id = $1 AND principal_issuer = $2 ORDER BY upstream, client_id`, p.ID(), p.Issuer())
	if err != nil {
		return nil, s.fail("list connections", err)
	}
	defer rows.Close()
	var out []Connection
	for rows.Next() {
		c, err := scanConnection(rows)
		if err != nil {
			return nil, s.fail("list connections", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("list connections", err)
	}
	return out, nil
}

// DeleteConnection forgets p's grant for upstream through client clientID,
// on every gateway that shares the store: the next call there finds none.
// It reports whether there was one.
func (s *sqlStore) DeleteConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (bool, error) {
	if err := checkConnection(p, upstream, clientID); err != nil {
		return false, err
	}
	var gone bool
	err := s.update(ctx, "delete connection", func(tx *sql.Tx, _ time.Time) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM connections WHERE principal_id = $1 AND principal_issuer = $2 AND upstream = $3 AND client_id = $4",
			p.ID(), p.Issuer(), upstream, clientID)
		if err != nil {
			return s.fail("delete connection", err)
		}
		n, _ := res.RowsAffected()
		gone = n > 0
		return nil
	})
	return gone, err
}

func scanConnection(row scanner) (Connection, error) {
	var (
		id, issuer, upstream, client, scopes string
		sealed                               []byte
		created, updated                     int64
	)
	if err := row.Scan(&id, &issuer, &upstream, &client, &scopes, &sealed, &created, &updated); err != nil {
		return Connection{}, err
	}
	return Connection{
		Principal: policy.NewPrincipal(id, nil).WithIssuer(issuer), Upstream: upstream, ClientID: client,
		Scopes: strings.Fields(scopes), Sealed: sealed,
		CreatedAt: fromNanos(created), UpdatedAt: fromNanos(updated),
	}, nil
}
