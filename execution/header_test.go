package execution_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
)

type headerInput struct {
	Region string `json:"region" mcp:"header=Region"`
	Count  int    `json:"count,omitempty" mcp:"header=Count"`
	Small  int8   `json:"small,omitempty" mcp:"header=Small"`
	Dry    bool   `json:"dry,omitempty" mcp:"header=Dry-Run"`
	Note   string `json:"note,omitempty"`
}

// TestHeaderParamsPublished: the mcp header tag publishes x-mcp-header on
// the field's property (after the other keywords), integers get the safe
// range unless bounded already, and untagged fields are unchanged.
func TestHeaderParamsPublished(t *testing.T) {
	app := agnara.New("hdr", nil)
	c := app.Capability(func(in headerInput) error { return nil }, &agnara.CapabilityOptions{Name: "hdr"})
	p := compileOne(t, app, c)
	var got struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(p.InputSchema(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"region": {"type": "string", "x-mcp-header": "Region"},
		"count":  {"type": "integer", "minimum": -9007199254740991.0, "maximum": 9007199254740991.0, "x-mcp-header": "Count"},
		"small":  {"type": "integer", "minimum": -128.0, "maximum": 127.0, "x-mcp-header": "Small"},
		"dry":    {"type": "boolean", "x-mcp-header": "Dry-Run"},
		"note":   {"type": "string"},
	}
	if d := cmp.Diff(want, got.Properties); d != "" {
		t.Errorf("properties (-want +got):\n%s", d)
	}
	if s := string(p.InputSchema()); !strings.Contains(s, `"region":{"type":"string","x-mcp-header":"Region"}`) {
		t.Errorf("x-mcp-header is not published after the field's keywords: %s", s)
	}
}

type nestedHeader struct {
	Inner struct {
		Zone string `json:"zone" mcp:"header=Zone"`
	} `json:"inner"`
}

type embeddedHeader struct {
	headerBase
	Other string `json:"other"`
}

type headerBase struct {
	Tenant string `json:"tenant" mcp:"header=Tenant"`
}

// TestHeaderTagMistakes: every tag the exposure could not serve is a
// compile error naming the field.
func TestHeaderTagMistakes(t *testing.T) {
	tests := []struct {
		name string
		fn   any
		want string // in the error; "" for no error
	}{
		{"embedded is top-level", func(in embeddedHeader) error { return nil }, ""},
		{"pointer", func(in struct {
			R *string `json:"r" mcp:"header=R"`
		}) error {
			return nil
		}, ".R: a header parameter cannot be a pointer"},
		{"number", func(in struct {
			F float64 `json:"f" mcp:"header=F"`
		}) error {
			return nil
		}, "SEP-2243 leaves number out"},
		{"object", func(in struct {
			A []string `json:"a" mcp:"header=A"`
		}) error {
			return nil
		}, "must be a string, an integer or a boolean"},
		{"nested", func(in nestedHeader) error { return nil }, "Inner.Zone: mcp:\"header=Zone\" applies to top-level fields"},
		{"bad name", func(in struct {
			R string `json:"r" mcp:"header=Re gion"`
		}) error {
			return nil
		}, "must be an HTTP token"},
		{"empty name", func(in struct {
			R string `json:"r" mcp:"header="`
		}) error {
			return nil
		}, "the header name is empty"},
		{"unknown key", func(in struct {
			R string `json:"r" mcp:"heder=R"`
		}) error {
			return nil
		}, `want mcp:"header=<Name>"`},
		{"duplicate", func(in struct {
			A string `json:"a" mcp:"header=Region"`
			B string `json:"b" mcp:"header=region"`
		}) error {
			return nil
		}, "header parameter \"region\" is already declared by A"},
		{"output", func() (struct {
			R string `json:"r" mcp:"header=R"`
		}, error) {
			return struct {
				R string `json:"r" mcp:"header=R"`
			}{}, nil
		}, "input struct only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := agnara.New("hdr", nil)
			app.Capability(tt.fn, &agnara.CapabilityOptions{Name: "hdr"})
			_, err := execution.Compile(app)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Compile: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Compile error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
