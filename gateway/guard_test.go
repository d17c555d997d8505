package gateway_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDestructiveWriteWithoutScopes: a write bound "destructive" with no
// scopes is served, published destructive, and every call waits for an
// approval. It compiles because what guards it is the write's own policy
// (no anonymous caller may ask) and the approval of another person; the
// rule that refuses a destructive capability nothing guards (ADR 57) does
// not refuse it.
func TestDestructiveWriteWithoutScopes(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "scratch", Version: "1"}, nil)
	var calls atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "wipe", Description: "Wipe the scratch space."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		calls.Add(1)
		return nil, textOut{"wiped"}, nil
	})
	store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	up := gateway.Upstream{Name: "scratch", Prefix: "scratch_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)},
		Tools: []gateway.Tool{{Remote: "wipe", Title: "Wipe the scratch space", Write: "destructive"}}}
	g, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{up}}, &gateway.Options{Approvals: store})
	if st := state(g, "scratch"); st.State != gateway.StateUp || len(st.Absent) > 0 || len(st.Held) > 0 {
		t.Fatalf("upstream %+v\n%s", st, log)
	}
	cs := connect(t, url, "")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "gateway.scratch_wipe" || res.Tools[0].Annotations == nil ||
		res.Tools[0].Annotations.DestructiveHint == nil || !*res.Tools[0].Annotations.DestructiveHint {
		t.Fatalf("listed %+v, want gateway.scratch_wipe, destructive", res.Tools)
	}
	text, isErr := call(t, cs, "gateway.scratch_wipe", map[string]any{})
	if f := parseFailure(t, text); !isErr || f.Reason != string(approval.ReasonPending) || calls.Load() != 0 {
		t.Errorf("the first call answers %s (upstream called %d times), want approval_pending and no call", text, calls.Load())
	}
}
