package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agnara-go/agnara/bench/internal/loadtest"
	"github.com/agnara-go/agnara/bench/internal/realistic"
	"github.com/agnara-go/agnara/bench/load"
)

var update = flag.Bool("update", false, "rewrite internal/realistic's schema files from the schemas agnara-go derives")

func TestLoad(t *testing.T) {
	h, err := handler()
	if err != nil {
		t.Fatal(err)
	}
	loadtest.Run(t, h, 2, 300*time.Millisecond, load.Echo, load.Realistic)
}

// TestValidatesQuotes: the server validates the realistic workload's input.
func TestValidatesQuotes(t *testing.T) {
	h, err := handler()
	if err != nil {
		t.Fatal(err)
	}
	loadtest.RefusesInvalidQuotes(t, h)
}

// TestQuoteSchemas: the schemas the other servers are given
// (realistic.InputSchema, OutputSchema) are the ones agnara-go derives from
// the workload's Go types and publishes, so that every server validates
// against the same schemas.
func TestQuoteSchemas(t *testing.T) {
	snap, err := snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tool, err := snap.Tool(realistic.ToolName)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file      string
		published any
		given     json.RawMessage
	}{
		{"input.schema.json", tool.InputSchema, realistic.InputSchema},
		{"output.schema.json", tool.OutputSchema, realistic.OutputSchema},
	} {
		pub, err := json.MarshalIndent(tc.published, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(filepath.Join("..", "..", "internal", "realistic", tc.file), append(pub, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var a, b any
		if err := json.Unmarshal(pub, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(tc.given, &b); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("internal/realistic/%s is not the schema agnara-go publishes (go test ./servers/agnara -run TestQuoteSchemas -update):\n%s", tc.file, pub)
		}
	}
	if bytes.Contains(realistic.InputSchema, []byte(`"$ref"`)) {
		t.Error("the input schema has a $ref: every server should read it inline")
	}
}
