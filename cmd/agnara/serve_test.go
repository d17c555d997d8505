package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/proctest"
)

// TestApprovalsServe runs `agnara approvals serve -db PATH -dev-approver
// alice` on a database with one pending approval, as an operator would:
// the inbox lists it, a POST without the page's protection is refused with
// 403, and SIGTERM stops it.
func TestApprovalsServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approvals.db")
	s, err := approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Prepare(context.Background(), intent(t, "k1", "gw.update_document", "carol", `{"id":42,"title":"<Q3 plan>"}`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	p := proctest.StartCmd(t, proctest.Build(t, "."), "approvals", "serve", "-db", db, "-dev-approver", "alice", "-addr", "127.0.0.1:0")
	base := strings.TrimSuffix(p.URL, "/")

	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "/approvals/"+a.ID) || !strings.Contains(string(body), "Development mode.") {
		t.Fatalf("inbox: %d\n%s", res.StatusCode, body)
	}
	res, err = http.PostForm(base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a POST without the page's protection: %d, want 403", res.StatusCode)
	}

	p.Signal(syscall.SIGTERM)
	if err, ok := p.Wait(10 * time.Second); !ok || err != nil {
		t.Errorf("agnara approvals serve after SIGTERM: exited %v, %v\n%s", ok, err, p.Stderr)
	}
	s, err = approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _ := s.Get(context.Background(), a.ID); got.State != approval.StatePending {
		t.Errorf("the refused POST changed the approval: %s", got.State)
	}
}

func TestApprovalsServeRefusesDevOffLoopback(t *testing.T) {
	db := sqliteDB(t)
	s := db.open(t, nil)
	s.Close()
	code, _, errOut := agnara(now, "approvals", "serve", "-db", db.loc, "-dev-approver", "alice", "-addr", "0.0.0.0:0")
	if code != 1 || !strings.Contains(errOut, "listen on a loopback address") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	code, _, errOut = agnara(now, "approvals", "serve", "-db", db.loc, "-addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(errOut, "say who may decide") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
