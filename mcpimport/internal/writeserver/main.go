// Command writeserver is the independent write server of mcpimport's
// acceptance tests: a separate MCP SDK server process, over stdio, with one
// tool, record_value, that accepts only one fixed synthetic value, writes it
// into a file in a folder it is given, and keeps its own event ledger there,
// each line fsynced before it goes on. The -scenario flag picks how it
// fails:
//
//	success            write, then answer with the validated result
//	lost-response      write, then never answer
//	exit-before-write  exit (code 3) after receiving, before writing
//	exit-after-write   write, then exit (code 4) without answering
//	error-after-write  write, then answer isError
//
// The ledger (ledger.jsonl) is the remote side's evidence of what happened,
// for the tests to compare with the host's receipts. It is never read by
// the importer.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Value is the one value record_value accepts.
const Value = "agnara-synthetic-7f3a"

const (
	inputSchema  = `{"type":"object","properties":{"value":{"type":"string","const":"` + Value + `"}},"required":["value"],"additionalProperties":false}`
	outputSchema = `{"type":"object","properties":{"written":{"type":"boolean"},"value":{"type":"string"}},"required":["written","value"],"additionalProperties":false}`
)

func main() {
	dir := flag.String("dir", "", "folder to write into and keep the ledger in (must exist)")
	scenario := flag.String("scenario", "success", "success, lost-response, exit-before-write, exit-after-write or error-after-write")
	flag.Parse()
	if err := run(*dir, *scenario); err != nil {
		fmt.Fprintln(os.Stderr, "writeserver:", err)
		os.Exit(1)
	}
}

func run(dir, scenario string) error {
	switch scenario {
	case "success", "lost-response", "exit-before-write", "exit-after-write", "error-after-write":
	default:
		return fmt.Errorf("unknown -scenario %q", scenario)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("-dir %q: want an existing folder", dir)
	}
	l := &ledger{path: filepath.Join(dir, "ledger.jsonl"), dir: dir}
	srv := mcp.NewServer(&mcp.Implementation{Name: "writeserver", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:         "record_value",
		Description:  "Record the synthetic value in the server's folder.",
		InputSchema:  json.RawMessage(inputSchema),
		OutputSchema: json.RawMessage(outputSchema),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Value string `json:"value"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Value != Value {
			l.append("refused")
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "only the synthetic value is accepted"}}}, nil
		}
		l.append("received")
		if scenario == "exit-before-write" {
			os.Exit(3)
		}
		if err := writeValue(dir); err != nil {
			l.append("write-failed")
			return nil, err
		}
		l.append("written")
		switch scenario {
		case "exit-after-write":
			os.Exit(4)
		case "error-after-write":
			l.append("answered-error")
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "could not confirm the write"}}}, nil
		case "lost-response":
			<-ctx.Done() // never answer; the host gives up waiting (and may cancel)
			return nil, ctx.Err()
		}
		l.append("answered")
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "recorded"}},
			StructuredContent: map[string]any{"written": true, "value": Value},
		}, nil
	})
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}

// writeValue writes the value durably: a temporary file, fsynced, renamed
// into place, and the folder fsynced.
func writeValue(dir string) error {
	tmp := filepath.Join(dir, "value.txt.tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(Value + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "value.txt")); err != nil {
		return err
	}
	return syncDir(dir)
}

// ledger is the server's own event ledger: one JSON line per event, each
// fsynced before the server goes on.
type ledger struct {
	path, dir string
}

func (l *ledger) append(event string) {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writeserver: ledger:", err)
		os.Exit(1)
	}
	line, _ := json.Marshal(map[string]any{"event": event, "pid": os.Getpid()})
	if _, err = f.Write(append(line, '\n')); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "writeserver: ledger:", err)
		os.Exit(1)
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
