package mcpexpose

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type discardAudit struct{}

func (discardAudit) Record(context.Context, AuditRecord) {}

// TestAuditCostsNothingWithoutASink: without a sink, recording a call
// computes nothing (no digest, no record): zero allocations. With one, it
// does (so the measurement measures something).
func TestAuditCostsNothingWithoutASink(t *testing.T) {
	app := agnara.New("a", nil)
	exp := New(app)
	exp.Tool(app.Capability(func(context.Context, struct {
		ID string `json:"id"`
	}) (string, error) {
		return "", nil
	}, &agnara.CapabilityOptions{Name: "get", Description: "Get."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Name: "a.get", Arguments: json.RawMessage(`{"id": "x", "n": [1, 2.0]}`),
		Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	}}
	res := projection.Failure(execution.Fail(execution.Conflict, "pending", map[string]any{"approval_id": "ap-1"}).WithReason("approval_pending"))
	p := policy.NewPrincipal("alice", nil)
	for _, c := range []struct {
		name string
		sink AuditSink
		zero bool
	}{{"no sink", nil, true}, {"sink", discardAudit{}, false}} {
		s, err := newServer(snap, &ServerOptions{Audit: c.sink}, true)
		if err != nil {
			t.Fatal(err)
		}
		tl := snap.tools[0]
		allocs := testing.AllocsPerRun(100, func() { s.audit(context.Background(), req, tl, p, "conflict", res) })
		if (allocs == 0) != c.zero {
			t.Errorf("%s: %v allocations per recorded call", c.name, allocs)
		}
	}
}

func TestTraceID(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for tp, want := range map[string]string{
		"00-" + id + "-00f067aa0ba902b7-01":                       id,
		"01-" + id + "-00f067aa0ba902b7-01-future":                id, // a later version may append fields
		"00-" + id + "-00f067aa0ba902b7-01-x":                     "", // version 00 has exactly four
		"01-" + id + "-00f067aa0ba902b7-01x":                      "",
		"ff-" + id + "-00f067aa0ba902b7-01":                       "",
		"00-" + strings.ToUpper(id) + "-00f067aa0ba902b7-01":      "",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": "",
		"00-" + id + "-00f067aa0ba902b7":                          "",
		"00-" + id[:31] + "\n-00f067aa0ba902b7-01":                "",
		"": "",
	} {
		if got := traceID(tp); got != want {
			t.Errorf("traceID(%q) = %q, want %q", tp, got, want)
		}
	}
}

// TestApprovalIDDetailIsTheImportersKey ties approvalIDDetail to the detail
// package mcpimport names an imported write's approval with (mcpexpose
// does not import mcpimport, which brings the approval stores).
func TestApprovalIDDetailIsTheImportersKey(t *testing.T) {
	src, err := os.ReadFile("../mcpimport/write.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `f.Details["`+approvalIDDetail+`"] = a.ID`) {
		t.Errorf("mcpimport/write.go does not name approvals with the detail %q", approvalIDDetail)
	}
}
