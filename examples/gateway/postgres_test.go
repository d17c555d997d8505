package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeAnswer is what a call of an approval-gated write answered.
type writeAnswer struct {
	ok         bool
	structured string // on success
	reason     string // the failure's reason
	approvalID string
}

func callWrite(ctx context.Context, cs *mcp.ClientSession, args string) (writeAnswer, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "directory.create_user", Arguments: json.RawMessage(args)})
	if err != nil {
		return writeAnswer{}, err
	}
	if !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		return writeAnswer{ok: true, structured: string(b)}, err
	}
	var body struct {
		Reason  string `json:"reason"`
		Details struct {
			ApprovalID string `json:"approval_id"`
		} `json:"details"`
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), &body); err != nil {
		return writeAnswer{}, err
	}
	return writeAnswer{reason: body.Reason, approvalID: body.Details.ApprovalID}, nil
}

func mustWrite(t *testing.T, cs *mcp.ClientSession, args string) writeAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := callWrite(ctx, cs, args)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// usersWithEmail counts the upstream's users with email, asking the
// upstream itself rather than a gateway.
func usersWithEmail(t *testing.T, upstream *mcp.ClientSession, email string) int {
	t.Helper()
	return strings.Count(structured(t, callTool(t, upstream, "users.list_users", `{}`)), `"`+email+`"`)
}

// TestGatewaysShareApprovalsOnPostgres runs two gateway processes on one
// PostgreSQL approval database in front of one users example: an approved
// create_user made at the same moment on both reaches the upstream once,
// and a gateway killed with SIGKILL loses no approval and no receipt.
func TestGatewaysShareApprovalsOnPostgres(t *testing.T) {
	usersURL := proctest.Start(t, proctest.Build(t, "../users"), "-addr", "127.0.0.1:0", "-dev-scopes", "users:read users:write")
	upstream := connect(t, usersURL, nil)
	dsn := enginetest.Postgres(t) // empty: the gateways migrate it
	gatewayBin := proctest.Build(t, ".")
	agnaraCLI := proctest.Build(t, "../../cmd/agnara")
	start := func() (*mcp.ClientSession, func()) {
		url, p := proctest.StartProcess(t, gatewayBin, "-addr", "127.0.0.1:0", "-upstream", usersURL, "-approvals-postgres", dsn)
		return connect(t, url, nil), func() {
			if err := p.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			p.Wait()
		}
	}
	gw1, kill1 := start()
	gw2, _ := start()
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(agnaraCLI, append([]string{"approvals"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("agnara approvals %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	const edsger = `{"name":"Edsger","email":"edsger@example.com"}`
	first := mustWrite(t, gw1, edsger)
	if first.reason != "approval_pending" || first.approvalID == "" {
		t.Fatalf("first call: %+v", first)
	}
	if again := mustWrite(t, gw2, edsger); again.reason != "approval_pending" || again.approvalID != first.approvalID {
		t.Fatalf("the same call on the other gateway: %+v; want approval %s pending", again, first.approvalID)
	}
	cli("approve", "-postgres", dsn, first.approvalID, "-as", "alice")

	// The approved call, at the same moment on both gateways.
	var (
		wg      sync.WaitGroup
		answers [2]writeAnswer
		errs    [2]error
	)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	release := make(chan struct{})
	for i, gw := range []*mcp.ClientSession{gw1, gw2} {
		wg.Go(func() {
			<-release
			answers[i], errs[i] = callWrite(ctx, gw, edsger)
		})
	}
	close(release)
	wg.Wait()
	var created string
	for i, a := range answers {
		switch {
		case errs[i] != nil:
			t.Fatalf("gateway %d: %v", i+1, errs[i])
		case a.ok && strings.Contains(a.structured, `"edsger@example.com"`):
			if created != "" && a.structured != created {
				t.Errorf("the gateways answered two different users:\n%s\n%s", created, a.structured)
			}
			created = a.structured
		case a.reason == "approval_in_progress" && a.approvalID == first.approvalID:
			// The other gateway held the claim and was dispatching: the
			// documented answer for the loser.
		default:
			t.Errorf("gateway %d answered %+v", i+1, a)
		}
	}
	if created == "" {
		t.Fatalf("neither gateway dispatched the approved call: %+v", answers)
	}
	if n := usersWithEmail(t, upstream, "edsger@example.com"); n != 1 {
		t.Fatalf("the upstream has %d users edsger@example.com, want exactly 1", n)
	}
	for i, gw := range []*mcp.ClientSession{gw1, gw2} {
		if a := mustWrite(t, gw, edsger); !a.ok || a.structured != created {
			t.Errorf("repeat on gateway %d = %+v, want the shared receipt %s", i+1, a, created)
		}
	}

	// A second write is approved; then gateway 1 dies, without a chance to
	// close anything.
	const barbara = `{"name":"Barbara","email":"barbara@example.com"}`
	pending := mustWrite(t, gw1, barbara)
	if pending.reason != "approval_pending" {
		t.Fatalf("second write: %+v", pending)
	}
	cli("approve", "-postgres", dsn, pending.approvalID, "-as", "alice")
	kill1()

	// A fresh gateway and the CLI see everything the dead one was told.
	gw3, _ := start()
	if a := mustWrite(t, gw3, edsger); !a.ok || a.structured != created {
		t.Errorf("the receipt after the kill = %+v, want %s", a, created)
	}
	if a := mustWrite(t, gw3, barbara); !a.ok || !strings.Contains(a.structured, `"barbara@example.com"`) {
		t.Fatalf("the approval after the kill = %+v, want it dispatched", a)
	}
	if a := mustWrite(t, gw2, barbara); !a.ok {
		t.Errorf("the second write's receipt on gateway 2 = %+v", a)
	}
	for _, email := range []string{"edsger@example.com", "barbara@example.com"} {
		if n := usersWithEmail(t, upstream, email); n != 1 {
			t.Errorf("the upstream has %d users %s, want exactly 1", n, email)
		}
	}
	list := cli("list", "-postgres", dsn, "-state", "completed")
	for _, id := range []string{first.approvalID, pending.approvalID} {
		if !strings.Contains(list, id) {
			t.Errorf("agnara approvals list -postgres lacks %s:\n%s", id, list)
		}
	}
	if strings.Count(list, "committed") != 2 {
		t.Errorf("want two committed receipts:\n%s", list)
	}
}
