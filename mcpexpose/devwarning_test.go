package mcpexpose_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
)

// TestDevelopmentWarningWithoutALogger: an application that configures no
// logger still gets the development principal's warning, on the process's
// default logger (standard error). Not parallel: it sets slog's default.
func TestDevelopmentWarningWithoutALogger(t *testing.T) {
	var buf mcptest.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	app := agnara.New("dev", nil) // no logger: agnara discards by default
	app.Capability(func() (string, error) { return "ok", nil }, &agnara.CapabilityOptions{Name: "ping", Description: "Answers."})
	exp := mcpexpose.New(app)
	for _, c := range app.Capabilities() {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dev := policy.NewPrincipal("developer", []string{"a:read"})
	if _, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev}}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, "DEVELOPMENT MODE") || !strings.Contains(got, "principal=developer") {
		t.Errorf("default logger got %q, want the development warning", got)
	}
}

// TestUnreachableWarningWithoutALogger: the warning that scoped tools can
// be called by no one reaches an application that configures no logger
// (the hello example, say) on the process's default logger. Not parallel:
// it sets slog's default.
func TestUnreachableWarningWithoutALogger(t *testing.T) {
	var buf mcptest.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	if _, err := mcpexpose.NewHandler(scopedSnap(t, true, true), nil); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); strings.Count(got, unreachableMsg) != 1 || !strings.Contains(got, "tools=3 of=4") {
		t.Errorf("default logger got %q, want one warning of 3 tools", got)
	}
}
