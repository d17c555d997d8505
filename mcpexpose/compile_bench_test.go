package mcpexpose_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// BenchmarkCompile compiles an exposure of 1,000 tools that share one input
// and one output type, as tools over one domain type do: the whole start-up
// cost of an MCP server (plans, schemas, tool projection, output-envelope
// validators). The budget is 100 ms.
func BenchmarkCompile(b *testing.B) {
	const n = 1000
	b.ReportAllocs()
	for b.Loop() {
		app := agnara.New("bench", nil)
		exp := mcpexpose.New(app)
		for i := range n {
			exp.Tool(app.Capability(echo, &agnara.CapabilityOptions{Name: fmt.Sprintf("echo%d", i), Description: "Echo.", Scopes: []string{"s"}}), nil)
		}
		if _, err := exp.Compile(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/tool")
}

// BenchmarkCompileDistinct compiles exposures of 1,000 and 10,000 tools
// whose input and output types are all distinct (built with
// reflect.StructOf), so that no two tools share a schema: the cost per
// tool must not grow with the number of tools. Each is compiled once
// before the loop, so that the loop measures compiling again, as a swap or
// a test binary does; with AGNARA_BENCH_FIRST=1 it measures the process's
// first compile instead (run it with -benchtime 1x).
func BenchmarkCompileDistinct(b *testing.B) {
	first := os.Getenv("AGNARA_BENCH_FIRST") == "1"
	for _, n := range []int{1000, 10000} {
		fns := distinctFuncs(n*10, n, true) // types of their own, for each n
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if !first {
				compileDistinct(b, fns)
			}
			b.ReportAllocs()
			for b.Loop() {
				compileDistinct(b, fns)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/tool")
		})
	}
}

func compileDistinct(tb testing.TB, fns []any) {
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	for i, fn := range fns {
		exp.Tool(app.Capability(fn, &agnara.CapabilityOptions{Name: fmt.Sprintf("t%d", i), Description: "Echo.", Scopes: []string{fmt.Sprintf("s%d", i%16)}}), nil)
	}
	if _, err := exp.Compile(); err != nil {
		tb.Fatal(err)
	}
}

// distinctFuncs returns n capability functions func(context.Context, In)
// (Out, error) whose In and Out are struct types of their own, numbered
// from first; without output, func(context.Context, In) error.
func distinctFuncs(first, n int, output bool) []any {
	fns := make([]any, n)
	for k := range fns {
		i := first + k
		in := reflect.StructOf([]reflect.StructField{
			{Name: "Message", Type: reflect.TypeFor[string](), Tag: `json:"message"`},
			{Name: fmt.Sprintf("In%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(fmt.Sprintf(`json:"in%d,omitempty"`, i))},
		})
		out := reflect.StructOf([]reflect.StructField{
			{Name: fmt.Sprintf("Out%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`json:"out%d"`, i))},
		})
		results := []reflect.Type{out, reflect.TypeFor[error]()}
		if !output {
			results = results[1:]
		}
		ft := reflect.FuncOf([]reflect.Type{reflect.TypeFor[context.Context](), in}, results, false)
		fns[k] = reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
			zeros := make([]reflect.Value, len(results))
			for i, r := range results {
				zeros[i] = reflect.Zero(r)
			}
			return zeros
		}).Interface()
	}
	return fns
}
