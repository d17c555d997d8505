package mcpexpose_test

import (
	"errors"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/mcpexpose"
)

// TestOneFrozenError: ErrFrozen means one thing. A definition made after
// what it belongs to was compiled, in di, agnara or mcpexpose, is
// errors.Is each package's ErrFrozen, whichever the host imported, and
// says so in one wording.
func TestOneFrozenError(t *testing.T) {
	compiled := func(t *testing.T) (*agnara.App, *agnara.Capability, *mcpexpose.Exposure) {
		t.Helper()
		app := agnara.New("app", nil)
		c := app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "a", Description: "A."})
		exp := mcpexpose.New(app)
		exp.Tool(c, nil)
		if _, err := exp.Compile(); err != nil {
			t.Fatal(err)
		}
		return app, c, exp
	}
	declaredLate := func(t *testing.T, declare func(*mcpexpose.Exposure, *agnara.Capability)) error {
		_, c, exp := compiled(t)
		declare(exp, c)
		_, err := exp.Compile()
		return err
	}
	for _, tc := range []struct {
		name string
		late func(t *testing.T) error
	}{
		{"di provider", func(t *testing.T) error {
			reg := di.NewRegistry()
			c, err := container.New(registry.Dependencies(reg))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			di.Supply(reg, "late")
			c2, err := container.New(registry.Dependencies(reg))
			if err == nil {
				c2.Close()
			}
			return err
		}},
		{"agnara capability", func(t *testing.T) error {
			app, _, _ := compiled(t)
			app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "late", Description: "Late."})
			_, err := execution.Compile(app)
			return err
		}},
		{"mcpexpose tool", func(t *testing.T) error {
			return declaredLate(t, func(exp *mcpexpose.Exposure, c *agnara.Capability) {
				exp.Tool(c, &mcpexpose.ToolOptions{Name: "again"})
			})
		}},
		{"mcpexpose resource", func(t *testing.T) error {
			return declaredLate(t, func(exp *mcpexpose.Exposure, c *agnara.Capability) {
				exp.Resource(c, &mcpexpose.ResourceOptions{URI: "app://a"})
			})
		}},
		{"mcpexpose prompt", func(t *testing.T) error {
			return declaredLate(t, func(exp *mcpexpose.Exposure, c *agnara.Capability) { exp.Prompt(c, nil) })
		}},
		{"mcpexpose withdrawn tool", func(t *testing.T) error {
			return declaredLate(t, func(exp *mcpexpose.Exposure, _ *agnara.Capability) {
				exp.Withdrawn("gone", execution.Fail(execution.Unavailable, "gone", nil), nil)
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.late(t)
			for _, frozen := range []struct {
				pkg string
				err error
			}{{"di", di.ErrFrozen}, {"agnara", agnara.ErrFrozen}, {"mcpexpose", mcpexpose.ErrFrozen}} {
				if !errors.Is(err, frozen.err) {
					t.Errorf("errors.Is(%v, %s.ErrFrozen) = false", err, frozen.pkg)
				}
			}
		})
	}
	if di.ErrFrozen.Error() != "agnara: frozen: declared after compile" {
		t.Errorf("ErrFrozen reads %q", di.ErrFrozen)
	}
}
