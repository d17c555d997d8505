package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

var (
	contextType     = reflect.TypeFor[context.Context]()
	execContextType = reflect.TypeFor[*Context]()
	errorType       = reflect.TypeFor[error]()
	contentsType    = reflect.TypeFor[[]Content]()
	resultType      = reflect.TypeFor[Result]()
	// checkedResultType is the type of a function that validates the
	// structured value of its Result itself (registry.CheckedResult).
	checkedResultType = reflect.TypeFor[checkedResult]()
)

// checkedResult is a capability function returning a [Result] that
// validates the Result's structured value against the output schema it
// is registered with before returning one; only this module's packages
// can give a function this type (registry.CheckedResult): mcpimport's
// imported tools, whose remote results are validated where the failure
// can be named (ADR 81).
type checkedResult func(*Context, json.RawMessage) (Result, error)

// markChecked gives f the type checkedResult (registry.CheckedResult).
func markChecked(f func(*Context, json.RawMessage) (Result, error)) any { return checkedResult(f) }

type ctxParam uint8

const (
	noContext ctxParam = iota
	stdContext
	execContext
)

type inputParam uint8

const (
	noInput inputParam = iota
	structInput
	rawInput
)

// signature is what compilation learns from a capability function's type.
type signature struct {
	ctx      ctxParam
	input    inputParam
	inType   reflect.Type
	deps     []reflect.Type
	firstDep int          // index of the first dependency parameter
	out      reflect.Type // nil when the function returns only error
	content  bool         // out is []Content or Result
	result   bool         // out is Result
}

// analyze checks fnType against the capability shape:
//
//	func([ctx,] [In,] deps...) (Out, error) | error
func analyze(fnType reflect.Type) (signature, []string) {
	var (
		sig      signature
		problems []string
	)
	if fnType.IsVariadic() {
		problems = append(problems, "variadic functions cannot be capabilities")
	}
	i, n := 0, fnType.NumIn()
	if n > 0 {
		switch fnType.In(0) {
		case contextType:
			sig.ctx, i = stdContext, 1
		case execContextType:
			sig.ctx, i = execContext, 1
		}
	}
	if i < n {
		switch t := fnType.In(i); {
		case t == rawMessageType:
			sig.input, sig.inType, i = rawInput, t, i+1
		case t.Kind() == reflect.Struct:
			sig.input, sig.inType, i = structInput, t, i+1
		}
	}
	sig.firstDep = i
	for ; i < n; i++ {
		t := fnType.In(i)
		if t == contextType || t == execContextType {
			problems = append(problems, fmt.Sprintf("parameter %d: a context must be the first parameter", i+1))
			continue
		}
		sig.deps = append(sig.deps, t)
	}
	switch fnType.NumOut() {
	case 1:
		if fnType.Out(0) != errorType {
			problems = append(problems, fmt.Sprintf("result %s: want (Out, error) or error", fnType.Out(0)))
		}
	case 2:
		if fnType.Out(1) != errorType {
			problems = append(problems, fmt.Sprintf("second result %s: want error", fnType.Out(1)))
		}
		sig.out = fnType.Out(0)
		sig.result = sig.out == resultType
		sig.content = sig.out == contentsType || sig.result
	default:
		problems = append(problems, fmt.Sprintf("%d results: want (Out, error) or error", fnType.NumOut()))
	}
	return sig, problems
}

// inputMistake explains a parameter in the input's position that has no
// provider and cannot be a dependency anyway, because it is a plain value:
// it was meant as the input, and the input must be a struct.
func inputMistake(t reflect.Type, index int, sig signature) string {
	if index != sig.firstDep || sig.input != noInput {
		return ""
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return "" // dependencies are usually pointers or interfaces
	}
	return fmt.Sprintf("the input must be a struct, whose fields are the arguments; got %s (wrap it: struct{ Value %s `json:\"value\"` })", t, t)
}

// dependencyHint explains a missing provider for a parameter that was
// probably meant as something else.
func dependencyHint(t reflect.Type, index int, sig signature) string {
	switch {
	case t.Kind() == reflect.Struct:
		return " (only the first parameter after the context can be the input struct)"
	case index == sig.firstDep && sig.input == noInput && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		return " (an input struct is passed by value, not by pointer)"
	}
	return ""
}

// emptyObjectSchema is the input schema of a capability without input.
var emptyObjectSchema = []byte(`{"type":"object","properties":{},"additionalProperties":false}`)

// checkRawSchema checks a schema supplied for a json.RawMessage input.
func checkRawSchema(schema json.RawMessage) error {
	root, err := parseOrdered(schema)
	if err != nil {
		return fmt.Errorf("InputSchema is not valid JSON: %v", err)
	}
	o, ok := root.(*object)
	if !ok || o.vals["type"] != "object" {
		return fmt.Errorf(`InputSchema must describe an object ("type": "object" at the root)`)
	}
	return nil
}
