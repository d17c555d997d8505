package inbox_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/internal/enginetest"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to look into the database
)

// TestSignInsHoldAcrossInstances runs two inbox instances behind one public
// name, each with its own connection to one PostgreSQL database, as two
// hosts behind a load balancer without affinity: a sign-in started on A
// and finished on B is honoured on A; a page rendered by B carries a token
// A accepts; signing out on A ends the session on B; a session that
// expires ends on both. The database holds a digest of the cookie, never
// the cookie.
func TestSignInsHoldAcrossInstances(t *testing.T) {
	const public = "https://approvals.example.com"
	dsn := enginetest.Postgres(t)
	ctx := context.Background()
	if err := approval.MigratePostgres(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	openStore := func() *approval.PostgresStore {
		s, err := approval.OpenPostgres(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	storeA, storeB := openStore(), openStore()
	issuer := startDevIssuer(t, public+"/callback")
	start := time.Now()
	clock := &testClock{now: start}
	serve := func(s inbox.Store) string {
		in, err := inbox.New(ctx, s, inbox.Options{SecureCookies: true, SessionTTL: time.Hour, Now: clock.Now,
			OIDC: &inbox.OIDC{Issuer: issuer, ClientID: testClient, ClientSecret: testSecret, RedirectURL: public + "/callback"}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(in)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, b := serve(storeA), serve(storeB)
	first := prepare(t, storeA, "bob", "Create notes", `{"name":"Ada"}`)

	alice := newUser(t, "approvals.example.com")
	if got, _ := walkSignInAcross(t, alice, a, b, issuer, "?next=/", "alice"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/" {
		t.Fatalf("a sign-in started on A, back on B: %d to %q\n%s", got.status, got.header.Get("Location"), got.body)
	}
	cookie := alice.cookies["agnara_inbox"].Value
	if got := alice.get(a + "/"); got.status != http.StatusOK || !strings.Contains(got.body, `id="approver">alice`) {
		t.Fatalf("B's sign-in on A: %d\n%s", got.status, got.body)
	}
	token := alice.get(b + "/approvals/" + first.ID).token(t)
	if got := alice.post(a+"/approvals/"+first.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token}}, nil); got.status != http.StatusSeeOther {
		t.Fatalf("B's page token, posted to A: %d\n%s", got.status, got.body)
	}
	if got, err := storeB.Get(ctx, first.ID); err != nil || got.State != approval.StateApproved || got.DecidedBy != "alice" {
		t.Fatalf("after the decision on A, B reads %s by %q (%v)", got.State, got.DecidedBy, err)
	}

	// The database keeps a digest of the cookie, not the cookie.
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, leaked int
	if err := db.QueryRow("SELECT count(*), count(*) FILTER (WHERE id_hash = $1 OR approver_id = $1) FROM inbox_signins", cookie).Scan(&rows, &leaked); err != nil || rows != 1 || leaked != 0 {
		t.Fatalf("inbox_signins: %d rows, %d holding the cookie (%v); want one row, holding none", rows, leaked, err)
	}

	// Signing out on A ends the session on B.
	out := alice.post(a+"/logout", url.Values{"csrf": {alice.get(a + "/").token(t)}}, nil)
	if out.status != http.StatusSeeOther {
		t.Fatalf("sign out on A: %d\n%s", out.status, out.body)
	}
	replay := newUser(t, "approvals.example.com")
	replay.cookies["agnara_inbox"] = &http.Cookie{Name: "agnara_inbox", Value: cookie}
	if got := replay.get(b + "/"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/login?next=/" {
		t.Errorf("the session signed out on A, on B: %d to %q, want sign-in again", got.status, got.header.Get("Location"))
	}

	// A session that expires ends on both.
	if got, _ := walkSignIn(t, alice, b, issuer, "?next=/", "alice"); got.status != http.StatusSeeOther {
		t.Fatalf("signing in again on B: %d\n%s", got.status, got.body)
	}
	second := prepare(t, storeA, "bob", "Second", `{}`)
	token = alice.get(a + "/approvals/" + second.ID).token(t)
	clock.set(start.Add(time.Hour))
	if got := alice.post(b+"/approvals/"+second.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token}}, nil); got.status != http.StatusForbidden {
		t.Errorf("an expired session's decision on B: %d, want 403", got.status)
	}
	if got := alice.get(a + "/"); got.status != http.StatusSeeOther {
		t.Errorf("an expired session on A: %d, want the redirect to sign in", got.status)
	}
	if got, err := storeA.Get(ctx, second.ID); err != nil || got.State != approval.StatePending {
		t.Errorf("the expired session changed the approval: %s (%v)", got.State, err)
	}
}
