package load

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/bench/internal/realistic"
)

// quoteResult builds a tools/call result of the realistic workload from the
// expected quote: edit changes the structured content's generic value and
// text that of the text copy (nil: unchanged), extra the result's object.
func quoteResult(t *testing.T, edit, text func(q map[string]any), extra func(r map[string]any)) []byte {
	t.Helper()
	generic := func(f func(q map[string]any)) []byte {
		b, err := json.Marshal(realistic.Expected())
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			return b
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		f(v)
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
		return b
	}
	r := map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": string(generic(text))}},
		"structuredContent": json.RawMessage(generic(edit)),
	}
	if extra != nil {
		extra(r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func quoteOf(v map[string]any) map[string]any { return v["result"].(map[string]any) }

func line(v map[string]any, i int) map[string]any {
	return quoteOf(v)["lines"].([]any)[i].(map[string]any)
}

// TestCheckRealistic: the realistic workload's check accepts the expected
// quote only, whole, in both the structured content and the text; any
// other answer is an error that says where it differs.
func TestCheckRealistic(t *testing.T) {
	for _, tc := range []struct {
		name       string
		edit, text func(q map[string]any)
		extra      func(r map[string]any)
		wantErr    string // "" means accepted
	}{
		{name: "expected"},
		{name: "complete", extra: func(r map[string]any) { r["resultType"] = "complete" }},
		{name: "wrong total", edit: func(v map[string]any) {
			quoteOf(v)["totals"].(map[string]any)["totalCents"] = 1.0
		}, wantErr: "/result/totals/totalCents is 1"},
		{name: "missing false field", edit: func(v map[string]any) { delete(line(v, 2), "gift") }, wantErr: "/result/lines/2/gift missing"},
		{name: "extra field", edit: func(v map[string]any) { line(v, 0)["note"] = "x" }, wantErr: "/result/lines/0/note unexpected"},
		{name: "lines swapped", edit: func(v map[string]any) {
			ls := quoteOf(v)["lines"].([]any)
			ls[0], ls[1] = ls[1], ls[0]
		}, wantErr: "/result/lines/0/"},
		{name: "line missing", edit: func(v map[string]any) {
			q := quoteOf(v)
			q["lines"] = q["lines"].([]any)[1:]
		}, wantErr: "has 11 elements, want 12"},
		{name: "tag changed", edit: func(v map[string]any) { line(v, 11)["tags"].([]any)[0] = "cable" }, wantErr: "/result/lines/11/tags/0"},
		{name: "nested address", edit: func(v map[string]any) {
			quoteOf(v)["customer"].(map[string]any)["shipping"].(map[string]any)["country"] = "DE"
		}, wantErr: "/result/customer/shipping/country"},
		{name: "warnings null", edit: func(v map[string]any) { quoteOf(v)["warnings"] = nil }, wantErr: "/result/warnings"},
		{name: "not enveloped", edit: func(v map[string]any) {
			q := quoteOf(v)
			clear(v)
			for k, x := range q {
				v[k] = x
			}
		}, wantErr: "/result missing"},
		{name: "text differs", text: func(v map[string]any) { line(v, 5)["quantity"] = 2.0 }, wantErr: "text content: not the expected quote: /result/lines/5/quantity"},
		{name: "two text blocks", extra: func(r map[string]any) { r["content"] = append(r["content"].([]any), r["content"].([]any)[0]) }, wantErr: "not one text block"},
		{name: "no text", extra: func(r map[string]any) { r["content"] = []any{} }, wantErr: "not one text block"},
		{name: "image, not text", extra: func(r map[string]any) {
			r["content"] = []any{map[string]any{"type": "image", "text": r["content"].([]any)[0].(map[string]any)["text"]}}
		}, wantErr: "not one text block"},
		{name: "no structured content", extra: func(r map[string]any) { delete(r, "structuredContent") }, wantErr: "structured content"},
		{name: "tool error", extra: func(r map[string]any) { r["isError"] = true }, wantErr: "tool error"},
		{name: "input required", extra: func(r map[string]any) { r["resultType"] = "input_required" }, wantErr: "result type"},
		{name: "trailing data in text", extra: func(r map[string]any) {
			c := r["content"].([]any)[0].(map[string]any)
			c["text"] = c["text"].(string) + " {}"
		}, wantErr: "data after the quote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRealistic(quoteResult(t, tc.edit, tc.text, tc.extra))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckRealistic = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestRealisticArguments: the workload sends the sample order, of about
// 2.4 KB, and expects a structured result of about 4.5 KB, every field of
// every item set (issue 42's workload).
func TestRealisticArguments(t *testing.T) {
	args := realistic.Arguments()
	res, err := json.Marshal(realistic.Expected())
	if err != nil {
		t.Fatal(err)
	}
	if len(args) < 2200 || len(args) > 2600 || len(res) < 4200 || len(res) > 4800 {
		t.Errorf("arguments %d B, result %d B: want about 2.4 KB and 4.5 KB", len(args), len(res))
	}
	var back realistic.Request
	if err := json.Unmarshal(args, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Items) != 12 {
		t.Errorf("%d items, want 12", len(back.Items))
	}
	w := newWorker(nil, Config{Workload: Realistic, Era: Modern})
	if w.tool != realistic.ToolName || !strings.Contains(string(w.suffix), string(args)) {
		t.Errorf("a realistic worker calls %q with %.200s", w.tool, w.suffix)
	}
}
