package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errFailed is returned once a failure has been printed: exit 1.
var errFailed = errors.New("failed")

// list prints the tools the server shows, every page of them.
func (t *toolsCLI) list(ctx context.Context, cs *mcp.ClientSession, f *toolsFlags, rec *challengeRecorder) error {
	var tools []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return rec.explain("tools/list", err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" || len(tools) > maxListed {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	if f.json {
		if tools == nil {
			tools = []*mcp.Tool{}
		}
		return t.printJSON(map[string]any{"tools": tools})
	}
	fmt.Fprintf(t.stdout, "%s: %d tools\n", serverLine(cs), len(tools))
	if len(tools) == 0 {
		return nil
	}
	// A VIEW column only when some tool has an MCP App view (read it with
	// agnara resources read URL URI).
	views := slices.ContainsFunc(tools, func(tool *mcp.Tool) bool { return viewOf(tool) != "" })
	tw := tabwriter.NewWriter(t.stdout, 0, 0, 2, ' ', 0)
	if views {
		fmt.Fprintln(tw, "NAME\tTITLE\tHINTS\tVIEW\tDESCRIPTION")
	} else {
		fmt.Fprintln(tw, "NAME\tTITLE\tHINTS\tDESCRIPTION")
	}
	for _, tool := range tools {
		title := tool.Title
		if title == "" && tool.Annotations != nil {
			title = tool.Annotations.Title
		}
		view := ""
		if views {
			view = orDash(printable(viewOf(tool))) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", printable(tool.Name), orDash(printable(oneLine(title, 40))), hints(tool.Annotations), view, orDash(printable(oneLine(tool.Description, 60))))
	}
	return tw.Flush()
}

// viewOf is the ui:// URI of the MCP App view a listed tool links (its
// _meta.ui.resourceUri), or "".
func viewOf(tool *mcp.Tool) string {
	ui, _ := tool.Meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	return uri
}

// oneLine is s on one line (runs of white space, newlines included, as one
// space), cut to at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// hints lists the annotations' behaviour hints, as the server states them.
func hints(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "-"
	}
	var h []string
	if a.ReadOnlyHint {
		h = append(h, "read-only")
	}
	if a.DestructiveHint != nil && *a.DestructiveHint {
		h = append(h, "destructive")
	}
	if a.IdempotentHint {
		h = append(h, "idempotent")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		h = append(h, "open-world")
	}
	return orDash(strings.Join(h, ","))
}

// call calls the tool and prints its result.
func (t *toolsCLI) call(ctx context.Context, cs *mcp.ClientSession, f *toolsFlags, rec *challengeRecorder, ask *asker, name string, arguments map[string]any) error {
	if arguments == nil {
		arguments = map[string]any{}
	}
	stop := t.spin("calling " + printable(name))
	ask.setSpinner(stop)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: arguments})
	stop()
	if err != nil {
		return t.callFailed(ctx, cs, rec, name, err)
	}
	return t.show(name, f, res)
}

// show prints the result of a call of the tool name: as JSON with -json,
// else its content or, for a failure, its code on stderr (errFailed).
func (t *toolsCLI) show(name string, f *toolsFlags, res *mcp.CallToolResult) error {
	if f.json {
		if err := t.printJSON(res); err != nil {
			return err
		}
		if res.IsError {
			return errFailed
		}
		return nil
	}
	if res.IsError {
		t.printFailure(name, res)
		return errFailed
	}
	t.printResult(res)
	return nil
}

// printJSON prints v indented, every character that is not printable
// escaped as \uXXXX (the same JSON value).
func (t *toolsCLI) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	fmt.Fprintln(t.stdout, escapeJSON(out.String(), true))
	return nil
}

// printResult prints a successful result: its structured content
// pretty-printed, and every content block that does not merely repeat it.
func (t *toolsCLI) printResult(res *mcp.CallToolResult) {
	var structured []byte
	if res.StructuredContent != nil {
		structured, _ = json.Marshal(res.StructuredContent)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && structured != nil && sameJSON(tc.Text, structured) {
			continue
		}
		t.printContent("", c)
	}
	if structured != nil {
		var out bytes.Buffer
		if json.Indent(&out, structured, "", "  ") == nil {
			fmt.Fprintln(t.stdout, escapeJSON(out.String(), true))
		}
	}
}

// sameJSON reports whether text is the JSON value b.
func sameJSON(text string, b []byte) bool {
	var x, y any
	if json.Unmarshal([]byte(text), &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// failure is the canonical failure of an agnara server (mcpexpose.ProjectResult).
type failure struct {
	Code    string          `json:"code"`
	Reason  string          `json:"reason"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details"`
}

// commandName is the command that prints, "tools call" unless set.
func (t *toolsCLI) commandName() string {
	if t.commandLabel == "" {
		return "tools call"
	}
	return t.commandLabel
}

// printFailure prints a tool's failure on stderr: the canonical code,
// reason and message when the result holds them, else its text.
func (t *toolsCLI) printFailure(name string, res *mcp.CallToolResult) {
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	var f failure
	if len(text) == 1 && json.Unmarshal([]byte(text[0]), &f) == nil && f.Code != "" {
		code := printable(f.Code)
		if f.Reason != "" {
			code += " (" + printable(f.Reason) + ")"
		}
		fmt.Fprintf(t.stderr, "agnara %s: %s failed: %s: %s\n", t.commandName(), printable(name), code, printable(f.Message))
		if len(f.Details) > 0 && string(f.Details) != "null" {
			var out bytes.Buffer
			if json.Indent(&out, f.Details, "", "  ") == nil {
				fmt.Fprintf(t.stderr, "details: %s\n", escapeJSON(out.String(), true))
			}
		}
		return
	}
	fmt.Fprintf(t.stderr, "agnara %s: %s failed:\n", t.commandName(), printable(name))
	for _, s := range text {
		for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			fmt.Fprintln(t.stderr, "  "+printable(line))
		}
	}
}

// printContent prints one content block, each line after indent: text
// line by line, anything else as a bracketed summary; all of it escaped.
func (t *toolsCLI) printContent(indent string, c mcp.Content) {
	switch c := c.(type) {
	case *mcp.TextContent:
		for _, line := range strings.Split(strings.TrimSuffix(c.Text, "\n"), "\n") {
			fmt.Fprintln(t.stdout, indent+printable(line))
		}
	case *mcp.ImageContent:
		fmt.Fprintf(t.stdout, "%s[image %s, %d bytes]\n", indent, printable(c.MIMEType), len(c.Data))
	case *mcp.AudioContent:
		fmt.Fprintf(t.stdout, "%s[audio %s, %d bytes]\n", indent, printable(c.MIMEType), len(c.Data))
	case *mcp.ResourceLink:
		fmt.Fprintf(t.stdout, "%s[resource link %s]\n", indent, printable(c.URI))
	case *mcp.EmbeddedResource:
		uri := ""
		if c.Resource != nil {
			uri = c.Resource.URI
		}
		fmt.Fprintf(t.stdout, "%s[resource %s]\n", indent, printable(uri))
	default:
		fmt.Fprintf(t.stdout, "%s[%T content]\n", indent, c)
	}
}
