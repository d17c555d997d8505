package agnaratest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// TestGreetNeedsScope is the test docs/capabilities.md shows, word for word
// (TestDocsSnippet checks it).
func TestGreetNeedsScope(t *testing.T) {
	snap := greeter() // the application's exposure, compiled (exp.Compile())

	anonymous := agnaratest.NewClient(t, snap, nil)
	if names := anonymous.ToolNames(t); len(names) != 0 {
		t.Errorf("an anonymous caller sees %v", names)
	}

	ada := agnaratest.NewClient(t, snap, &agnaratest.Options{
		Principal:       policy.NewPrincipal("ada", []string{"hello:use"}),
		ProtocolVersion: agnaratest.Handshake, // default: agnaratest.Modern
	})
	var greeting string
	ada.CallValue(t, "hello.greet", map[string]any{"name": "Ada"}, &greeting)
	if greeting != "Hello, Ada!" {
		t.Errorf("greeting = %q", greeting)
	}
	if f := ada.CallFailure(t, "hello.greet", map[string]any{"name": "nobody"}); f.Code != execution.NotFound {
		t.Errorf("failure = %v", f)
	}
}

// TestDocsSnippet ties the snippet of "Testing your capabilities" in
// docs/capabilities.md to the compiled test above.
func TestDocsSnippet(t *testing.T) {
	doc, err := os.ReadFile("../docs/capabilities.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Testing your capabilities\n")
	_, block, ok2 := strings.Cut(section, "```go\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/capabilities.md has no go block under ## Testing your capabilities")
	}
	src, err := os.ReadFile("doc_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), block) {
		t.Errorf("the snippet in docs/capabilities.md is not TestGreetNeedsScope in agnaratest/doc_test.go:\n%s", block)
	}
}
