package mcpimport_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadResources: a read of an imported resource is one resources/read
// of its remote URI (a template's expanded with the variables), and its
// contents come back as execution.Resource values without a URI (an
// exposure publishes them at the local URI read), typed as the content or
// the definition says.
func TestReadResources(t *testing.T) {
	l := newLibrary(nil)
	cat, err := discoverFeatures(t, l, featureBindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := featurePlans(t, cat)
	for _, tc := range []struct {
		name, args string
		want       []execution.Content
	}{
		{"readme", `{}`, []execution.Content{execution.Resource{MIMEType: "text/markdown", Text: "# The library"}}},
		{"logo", `{}`, []execution.Content{execution.Resource{MIMEType: "image/png", Blob: logoPNG}}},
		{"book", `{"id":"42"}`, []execution.Content{execution.Resource{MIMEType: "text/plain", Text: "Book 42"}}},
		// A simple {id} expansion encodes what would leave the template.
		{"book", `{"id":"../secret"}`, []execution.Content{execution.Resource{MIMEType: "text/plain", Text: "Book ..%2Fsecret"}}},
	} {
		t.Run(tc.name+" "+tc.args, func(t *testing.T) {
			out := invoke(t, plans, tc.name, tc.args, reader)
			s, ok := out.(execution.Success)
			if !ok {
				t.Fatalf("outcome %#v", out)
			}
			if d := cmp.Diff(tc.want, s.Content); d != "" {
				t.Errorf("contents (-want +got):\n%s", d)
			}
		})
	}
	t.Run("scopes", func(t *testing.T) {
		reads := l.reads.Load()
		out := invoke(t, plans, "readme", `{}`, policy.NewPrincipal("mallory", nil))
		if f, ok := out.(*execution.Failure); !ok || f.Code != execution.Forbidden {
			t.Errorf("a caller without docs:read: %#v", out)
		}
		if l.reads.Load() != reads {
			t.Error("a refused read reached the remote server")
		}
	})
}

// TestReadResultsFailClosed: an answer that is not the bound resource's
// contents as bound (another URI, text and a blob at once, no contents, a
// media type that is not one or that the binding does not accept, too much)
// and a remote error end in a canonical failure with a fixed message; what
// the remote server said reaches no caller.
func TestReadResultsFailClosed(t *testing.T) {
	l := newLibrary(nil)
	cat, err := discoverFeatures(t, l, featureBindings(), &mcpimport.Options{Limits: mcpimport.Limits{ObjectBytes: 1024, ContentBlocks: 4}})
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := featurePlans(t, cat)
	for _, tc := range []struct {
		mode string
		want execution.Reason
	}{
		{"elsewhere", mcpimport.ReasonResultInvalid},
		{"both", mcpimport.ReasonResultInvalid},
		{"empty", mcpimport.ReasonResultInvalid},
		{"badtype", mcpimport.ReasonResultInvalid},
		{"html", mcpimport.ReasonResultUnsupported},
		{"untyped", mcpimport.ReasonResultUnsupported},
		{"big", mcpimport.ReasonResultTooLarge},
		{"many", mcpimport.ReasonResultTooLarge},
		{"error", mcpimport.ReasonProtocolError},
		{"notfound", mcpimport.ReasonResourceNotFound},
		{"legacynotfound", mcpimport.ReasonResourceNotFound},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			wantReason(t, invoke(t, plans, "odd_resource", `{"mode":"`+tc.mode+`"}`, reader), tc.want)
		})
	}
	if _, ok := invoke(t, plans, "odd_resource", `{"mode":"ok"}`, reader).(execution.Success); !ok {
		t.Error("the well-behaved read failed")
	}
	// Not found is the canonical not_found, which mcpexpose answers as a
	// resource that does not exist.
	if f, _ := invoke(t, plans, "book", `{"id":"missing"}`, reader).(*execution.Failure); f == nil || f.Code != execution.NotFound {
		t.Errorf("a missing book: %v", f)
	}
}

// TestReadTimeoutAndClose: a read waits at most the call timeout, and a
// closed session fails reads at once.
func TestReadTimeoutAndClose(t *testing.T) {
	l := newLibrary(nil)
	release := make(chan struct{})
	defer close(release)
	l.server.AddResource(&mcp.Resource{URI: "lib://slow", Name: "slow"}, func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, ctx.Err()
	})
	cs, mon := connect(t, l.server, "2025-11-25")
	b := featureBindings()
	b.Resources["lib://slow"] = mcpimport.ResourceBinding{Name: "slow", Title: "Slow"}
	cat, err := mcpimport.DiscoverFeatures(context.Background(), newSession(t, cs, mon, "library"), b, &mcpimport.Options{Limits: mcpimport.Limits{CallTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := featurePlans(t, cat)
	wantReason(t, invoke(t, plans, "slow", `{}`, reader), mcpimport.ReasonTimeout)
	mon.Close()
	wantReason(t, invoke(t, plans, "readme", `{}`, reader), mcpimport.ReasonConnectionClosed)
}

// TestReadFailuresAreLoggedAtDebugOnly: the cause of a failed read, which
// may quote the remote server, is logged at debug level and nowhere else.
func TestReadFailuresAreLoggedAtDebugOnly(t *testing.T) {
	for _, level := range []string{"debug", "info"} {
		t.Run(level, func(t *testing.T) {
			logs, logger := captureLogs(level == "debug")
			cat, err := discoverFeatures(t, newLibrary(nil), featureBindings(), &mcpimport.Options{Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			plans, _ := featurePlans(t, cat)
			wantReason(t, invoke(t, plans, "odd_resource", `{"mode":"error"}`, reader), mcpimport.ReasonProtocolError)
			got := logs.String()
			if logged := strings.Contains(got, "hunter2") && strings.Contains(got, "reason=mcp_protocol_error"); logged != (level == "debug") {
				t.Errorf("at %s, the log is %q", level, got)
			}
		})
	}
}

// captureLogs returns a logger at debug or info level and what it wrote.
func captureLogs(debug bool) (*mcptest.Buffer, *slog.Logger) {
	buf := &mcptest.Buffer{}
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	return buf, slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: level}))
}
