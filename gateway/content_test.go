package gateway_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/gateway"
)

// TestContentKindsPassThrough: the npm everything server's image, resource
// link, embedded resource, annotated and structured tools reach a Go SDK
// client through the gateway exactly as they reach one that calls the
// server directly, at both eras; the gateway publishes the server's own
// output schema, and no empty schema anywhere (what the Inspector's
// --strict warns about).
func TestContentKindsPassThrough(t *testing.T) {
	nodeBin := node(t)
	server := npmServer(t, "server-everything")
	tools := []struct {
		remote, local string
		args          map[string]any
	}{
		{"get-tiny-image", "every_image", map[string]any{}},
		{"get-resource-links", "every_links", map[string]any{"count": 3}},
		{"get-resource-reference", "every_reference", map[string]any{"resourceType": "Text", "resourceId": 2}},
		{"get-resource-reference", "every_blob", map[string]any{"resourceType": "Blob", "resourceId": 3}},
		{"get-annotated-message", "every_annotated", map[string]any{"messageType": "error", "includeImage": true}},
		{"get-structured-content", "every_weather", map[string]any{"location": "Chicago"}},
	}
	var bound []gateway.Tool
	seen := map[string]bool{}
	for _, tl := range tools {
		if !seen[tl.remote] {
			seen[tl.remote] = true
			bound = append(bound, standard(tl.remote, strings.Replace(tl.local, "every_blob", "every_reference", 1), "The "+tl.remote+" tool", "every:read"))
		}
	}
	cfg := gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "everything", Prefix: "every_",
		Stdio: &gateway.StdioUpstream{Command: nodeBin, Args: []string{server, "stdio"}},
		Tools: bound,
	}}}
	g, url, log := started(t, cfg, nil)
	for _, s := range g.Status() {
		if s.State != gateway.StateUp || len(s.Absent) > 0 {
			t.Fatalf("upstream %+v\n%s", s, log)
		}
	}

	// The reference: the same server, called directly.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(nodeBin, server, "stdio")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	remote, err := direct.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	remoteOut := map[string]string{}
	for _, tl := range remote.Tools {
		b, _ := json.Marshal(tl.OutputSchema)
		remoteOut[tl.Name] = string(b)
	}

	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			cs := connect(t, url, protocol)
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range list.Tools {
				in, _ := json.Marshal(tl.InputSchema)
				out, _ := json.Marshal(tl.OutputSchema)
				for _, schema := range []string{string(in), string(out)} {
					if at := emptySchema(t, schema); at != "" {
						t.Errorf("%s publishes an empty schema at %s: %s", tl.Name, at, schema)
					}
				}
				if tl.Name == "gateway.every_weather" && string(out) != remoteOut["get-structured-content"] {
					t.Errorf("weather's output schema %s, want the remote's %s", out, remoteOut["get-structured-content"])
				}
			}
			for _, tl := range tools {
				name := "gateway." + strings.Replace(tl.local, "every_blob", "every_reference", 1)
				want, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: tl.remote, Arguments: tl.args})
				if err != nil || want.IsError {
					t.Fatalf("%s directly: %v %+v", tl.remote, err, want)
				}
				got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: tl.args})
				if err != nil || got.IsError {
					t.Fatalf("%s through the gateway: %v %+v", name, err, got)
				}
				if diff := cmp.Diff(want.Content, got.Content, createdAt); diff != "" {
					t.Errorf("%s: content (-direct +gateway):\n%s", tl.local, diff)
				}
				if diff := cmp.Diff(want.StructuredContent, got.StructuredContent); diff != "" {
					t.Errorf("%s: structured content (-direct +gateway):\n%s", tl.local, diff)
				}
			}
		})
	}
}

// createdAt compares texts without the time the everything server's
// dynamic resources say they were made at.
var createdAt = cmp.Transformer("createdAt", func(s string) string {
	return createdAtPattern.ReplaceAllString(s, "created at <time>")
})

var createdAtPattern = regexp.MustCompile(`created at [0-9:]+ [AP]M`)

// emptySchema returns where doc, a published schema, has a schema that
// says nothing ({}, which describes any value), or "".
func emptySchema(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return "" // no schema published at all
	}
	var walk func(v any, at string) string
	walk = func(v any, at string) string {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if len(m) == 0 {
			return at
		}
		for _, k := range []string{"items", "additionalProperties", "not"} {
			if at := walk(m[k], at+"/"+k); at != "" {
				return at
			}
		}
		for _, k := range []string{"properties", "$defs", "definitions"} {
			props, _ := m[k].(map[string]any)
			for name, p := range props {
				if at := walk(p, at+"/"+k+"/"+name); at != "" {
					return at
				}
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			list, _ := m[k].([]any)
			for i, p := range list {
				if at := walk(p, at+"/"+k+"/"+strconv.Itoa(i)); at != "" {
					return at
				}
			}
		}
		return ""
	}
	return walk(v, "#")
}
