package mcpimport_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
)

// actingUpstream is an upstream whose write tools act before they ask, and
// record what they ran: write_then_ask writes, then asks its caller to
// confirm (an input-required result, served as elicitation/create on a
// handshake-era session); write_then_refuse writes, then refuses the call
// for a client capability the caller lacks (-32021), as a tool that
// checks for it too late does. Its ledger is the remote side's account,
// which the importer never reads.
type actingUpstream struct {
	mu     sync.Mutex
	events []string
}

func (u *actingUpstream) record(event string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.events = append(u.events, event)
}

func (u *actingUpstream) ledger() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.events, " ")
}

func (u *actingUpstream) server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "acting", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`)
	srv.AddTool(&mcp.Tool{Name: "write_then_ask", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, ok := req.Params.InputResponses["confirm"]; ok {
			u.record("answered")
			return &mcp.CallToolResult{Content: text("done")}, nil
		}
		u.record("written")
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Keep it?", RequestedSchema: proceedForm}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "write_then_refuse", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		u.record("written")
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "elicitation required"}
	})
	return srv
}

// hookedStore is an approval store that runs a hook when a claim is
// taken (before the dispatch checks and sends), and one when a claim an
// earlier round of the call took is resumed (before the dispatch checks
// again and sends again): so that tests can change the world at either.
type hookedStore struct {
	approval.Store
	claimed, resumed func()
}

func (s hookedStore) Claim(ctx context.Context, id string, current approval.Binding) (approval.Approval, error) {
	a, err := s.Store.Claim(ctx, id, current)
	if err == nil && s.claimed != nil {
		s.claimed()
	}
	return a, err
}

func (s hookedStore) Get(ctx context.Context, id string) (approval.Approval, error) {
	a, err := s.Store.Get(ctx, id)
	if err == nil && a.State == approval.StateClaimed && s.resumed != nil {
		s.resumed()
	}
	return a, err
}

// TestSentWriteEffects: a write whose request reached the upstream is
// never recorded not_started, whatever ends it afterwards — the caller
// declining (or cancelling) the question the upstream asked in an earlier
// round, the upstream refusing with -32021 after it ran, a scope revoked
// or a catalog changed as the next round resumes the claim; each is
// unknown, and the upstream's ledger shows the write it did. A write
// stopped after its claim and before anything was sent stays not_started,
// with an empty ledger. Both upstream eras.
func TestSentWriteEffects(t *testing.T) {
	type world struct {
		revoked atomic.Bool
		sess    *mcpimport.Session
	}
	revoke := func(w *world) { w.revoked.Store(true) }
	stale := func(w *world) { w.sess.Monitor().ToolListChanged(context.Background(), nil) }
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		for _, tc := range []struct {
			name   string
			remote string
			// claimed runs once the claim is taken, before anything is
			// sent; resumed once the next round resumes the claim, before
			// the call would be sent again.
			claimed, resumed func(*world)
			answer           string // the caller's answer to the upstream's question, or ""
			reason           execution.Reason
			effect           approval.EffectState
			ledger           string
		}{
			{name: "declined after the upstream wrote and asked", remote: "write_then_ask", answer: "decline",
				reason: mcpimport.ReasonQuestionDeclined, effect: approval.EffectUnknown, ledger: "written"},
			{name: "cancelled after the upstream wrote and asked", remote: "write_then_ask", answer: "cancel",
				reason: mcpimport.ReasonQuestionDeclined, effect: approval.EffectUnknown, ledger: "written"},
			{name: "refused with -32021 after the upstream wrote", remote: "write_then_refuse",
				reason: mcpimport.ReasonQuestionRefused, effect: approval.EffectUnknown, ledger: "written"},
			{name: "scope revoked as the next round resumes the claim", remote: "write_then_ask", resumed: revoke, answer: "accept",
				reason: mcpimport.ReasonScopeDenied, effect: approval.EffectUnknown, ledger: "written"},
			{name: "catalog changed as the next round resumes the claim", remote: "write_then_ask", resumed: stale, answer: "accept",
				reason: mcpimport.ReasonCatalogStale, effect: approval.EffectUnknown, ledger: "written"},
			{name: "scope revoked after the claim, before sending", remote: "write_then_ask", claimed: revoke,
				reason: mcpimport.ReasonScopeDenied, effect: approval.EffectNotStarted, ledger: ""},
			{name: "catalog changed after the claim, before sending", remote: "write_then_ask", claimed: stale,
				reason: mcpimport.ReasonCatalogStale, effect: approval.EffectNotStarted, ledger: ""},
		} {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				up := &actingUpstream{}
				w := &world{}
				ct, st := mcp.NewInMemoryTransports()
				ss, err := up.server().Connect(context.Background(), st, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ss.Close() })
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				w.sess, err = mcpimport.Connect(ctx, "acting", ct, &mcpimport.ConnectOptions{SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: version}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { w.sess.Close() })
				store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
				t.Cleanup(func() { store.Close() })
				hooked := hookedStore{Store: store}
				if tc.claimed != nil {
					hooked.claimed = func() { tc.claimed(w) }
				}
				if tc.resumed != nil {
					hooked.resumed = func() { tc.resumed(w) }
				}
				validator := func(context.Context, policy.Principal, json.RawMessage) error {
					if w.revoked.Load() {
						return errors.New("scope revoked")
					}
					return nil
				}
				cat, err := mcpimport.DiscoverWrites(ctx, w.sess, map[string]mcpimport.WriteBinding{tc.remote: {
					Name: "act", Title: "Act", Effect: approval.EffectDestructive, ScopeValidator: validator,
					BindingID: "acting", BindingRevision: "1", ScopeID: "sandbox", ScopeRevision: "1",
				}}, &mcpimport.WriteOptions{Approvals: hooked})
				if err != nil {
					t.Fatal(err)
				}
				app := agnara.New("host", nil)
				cat.Register(app)
				plans, err := execution.Compile(app)
				if err != nil {
					t.Fatal(err)
				}
				p, _ := plans.Lookup("host.act")
				inv := &execution.Invocation{Principal: requester, Arguments: json.RawMessage(`{"id":"7"}`)}
				out, err := p.Invoke(context.Background(), inv)
				pending, _ := out.(*execution.Failure)
				if err != nil || execution.ReasonOf(pending) != approval.ReasonPending {
					t.Fatalf("first call: %#v, %v; want %s", out, err, approval.ReasonPending)
				}
				id, _ := pending.Details["approval_id"].(string)
				if _, err := store.Approve(context.Background(), id, approver, ""); err != nil {
					t.Fatal(err)
				}

				if out, err = p.Invoke(context.Background(), inv); err != nil {
					t.Fatal(err)
				}
				if ir, ok := out.(*execution.InputRequired); ok {
					// The upstream wrote and asked: the round ends asking the
					// caller, the claim held without a receipt.
					if tc.answer == "" {
						t.Fatalf("the first round asked %+v", ir.Requests)
					}
					if a, err := store.Get(context.Background(), id); err != nil || a.State != approval.StateClaimed || a.Receipt != nil {
						t.Fatalf("while the caller is asked: %+v (%v), want claimed without a receipt", a, err)
					}
					inv.RoundState = ir.RoundState
					inv.Answers = map[string]execution.Answer{}
					for key := range ir.Requests {
						ans := execution.Answer{Kind: execution.Elicitation, Action: tc.answer}
						if tc.answer == "accept" {
							ans.Content = json.RawMessage(`{"go":true}`)
						}
						inv.Answers[key] = ans
					}
					if out, err = p.Invoke(context.Background(), inv); err != nil {
						t.Fatal(err)
					}
				}
				f, _ := out.(*execution.Failure)
				if f == nil || execution.ReasonOf(f) != tc.reason || f.Details["effect"] != string(tc.effect) || f.Details["approval_id"] != id {
					t.Fatalf("the write ended %#v, want %s with effect %s", out, tc.reason, tc.effect)
				}
				a, err := store.Get(context.Background(), id)
				if err != nil || a.State != approval.StateCompleted || a.Receipt == nil || a.Receipt.Effect != tc.effect || a.Receipt.Reason != tc.reason {
					t.Fatalf("recorded %+v (receipt %+v), %v; want completed, %s, %s", a, a.Receipt, err, tc.effect, tc.reason)
				}
				if got := up.ledger(); got != tc.ledger {
					t.Errorf("the upstream ran %q, want %q", got, tc.ledger)
				}
				if tc.claimed != nil || tc.resumed != nil {
					return // the world changed: a repeat is refused before it reads the receipt
				}
				// A repeat answers the receipt and sends nothing.
				again, err := p.Invoke(context.Background(), &execution.Invocation{Principal: requester, Arguments: inv.Arguments})
				if g, _ := again.(*execution.Failure); err != nil || g == nil || execution.ReasonOf(g) != tc.reason || g.Details["effect"] != string(tc.effect) {
					t.Errorf("repeat: %#v, %v; want the recorded %s, %s", again, err, tc.reason, tc.effect)
				}
				if got := up.ledger(); got != tc.ledger {
					t.Errorf("after the repeat the upstream ran %q, want %q", got, tc.ledger)
				}
			})
		}
	}
}
