package mcpexpose_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain doubles as the stdio server for TestStdio: started with
// AGNARA_STDIO_SERVER=1, the test binary serves the fixture over its own
// standard input and output instead of running tests.
func TestMain(m *testing.M) {
	if os.Getenv("AGNARA_STDIO_SERVER") == "1" {
		f, err := buildFixture()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := mcpexpose.RunStdio(context.Background(), f.snap, policy.Anonymous(), nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGNARA_STDIO_SERVER=1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	l, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(l.Tools); got != "fx.echo,fx.fail,fx.slow,fx.render" {
		t.Errorf("anonymous stdio caller sees %s", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx.echo", Arguments: map[string]any{"text": "stdio"}})
	if err != nil || res.IsError || textOf(t, res) != `{"result":{"count":5,"text":"stdio"}}` {
		t.Fatalf("call = %+v, %v", res, err)
	}
}
