package execution

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The types of TestTypeSchemaWritesWhatInvopopWrote: every tag key the
// generator reads, on every JSON type, with values it reads and values it
// drops, flags, alternatives, extras, embedding and the special types.

type genStrings struct {
	A string  `json:"a" jsonschema:"minLength=1,maxLength=5,pattern=^a\\,b$,format=email,readOnly=true,writeOnly=true,example=x,example=y,enum=a,enum=b,default=x,title=T,description=D"`
	B string  `json:"b" jsonschema:"minLength=abc,maxLength=-1,readOnly=no,pattern=,format=,minimum=3,uniqueItems=true"`
	C string  `json:"c,omitempty" jsonschema:"required"`
	D *string `json:"d" jsonschema:"nullable,minLength=2"`
	E string  `json:"e" jsonschema_description:"Desc <b> & more" jsonschema:"description=Override"`
	F string  `json:"f" jsonschema:"type="`
	G string  `json:"g,omitzero" jsonschema:"anchor=x,title=,description=,default=,example=a=b,enum=c=d"`
	H string  `json:"h" jsonschema_description:"only a description"`
	I string  `json:"i" jsonschema:"type=integer,minimum=1,minLength=4"`
}

type genNumbers struct {
	A int     `json:"a" jsonschema:"minimum=1,maximum=10,exclusiveMinimum=0,exclusiveMaximum=11,multipleOf=2,default=4,example=6,enum=2,enum=4"`
	B float64 `json:"b" jsonschema:"minimum=1.50,maximum=1e3,multipleOf=0.5,default=2.5,example=-0,enum=1.25"`
	C int8    `json:"c" jsonschema:"minimum=ten,maximum=1=2,default=x,example=y,enum=z,multipleOf="`
	D uint16  `json:"d,omitempty" jsonschema:"minLength=3,pattern=x,format=y"`
	E *int64  `json:"e" jsonschema:"nullable,maximum=99"`
	F float32 `json:"f" jsonschema:"type=string,minLength=2,minimum=1"`
}

type genBooleans struct {
	A bool  `json:"a" jsonschema:"default=true,enum=true,title=Flag"`
	B bool  `json:"b" jsonschema:"default=yes,default=false"`
	C *bool `json:"c,omitempty" jsonschema:"default=true=false"`
}

type genArrays struct {
	A []string   `json:"a" jsonschema:"minItems=1,maxItems=3,uniqueItems=false,default=a,default=b,format=email,pattern=^x,minLength=2,enum=p,enum=q"`
	B []int      `json:"b" jsonschema:"minimum=1,enum=3,example=2,minItems=x"`
	C [3]int     `json:"c" jsonschema:"maxItems=4"`
	D []byte     `json:"d" jsonschema:"minLength=4,maxItems=2"`
	E [][]string `json:"e" jsonschema:"minLength=1,minItems=2"`
	F []bool     `json:"f" jsonschema:"default=true,default=x"`
	G []float64  `json:"g,omitempty" jsonschema:"multipleOf=0.1,pattern=a=b"`
	H [2]byte    `json:"h"`
	I []any      `json:"i" jsonschema:"format=uri,minLength=1"`
	J []*string  `json:"j" jsonschema:"maxLength=8"`
	K *[]string  `json:"k" jsonschema:"nullable,maxItems=9"`
}

type genMaps struct {
	A map[string]int             `json:"a" jsonschema:"minLength=1,title=M"`
	B map[string]any             `json:"b" jsonschema_description:"anything"`
	C map[string]json.RawMessage `json:"c"`
	D map[string][]string        `json:"d"`
	E map[string]genBooleans     `json:"e,omitempty"`
}

type genAlternatives struct {
	A string   `json:"a" jsonschema:"oneof_required=one,anyof_required=any"`
	B int      `json:"b" jsonschema:"oneof_required=two"`
	C bool     `json:"c" jsonschema:"oneof_required=one,anyof_required=other"`
	D string   `json:"d" jsonschema:"oneof_ref=#/a;#/b"`
	E []string `json:"e" jsonschema:"anyof_ref=#/c"`
	F any      `json:"f" jsonschema:"oneof_type=string;integer"`
	G string   `json:"g" jsonschema:"anyof_type=number;null,minLength=2"`
}

type genExtras struct {
	A string `json:"a" jsonschema_extras:"x=1,minimum=3,flag=true,flag=t"`
	B string `json:"b" jsonschema_extras:"x=a,x=b,x=c,y=false"`
	C string `json:"c" jsonschema:"title=T" jsonschema_extras:"title=Z,description=E,a=b"`
	D int    `json:"d" jsonschema:"minimum=2" jsonschema_extras:"minimum=5,minimum=x"`
	E string `json:"e" jsonschema_description:"d" jsonschema_extras:"description=e,escaped=a\\,b"`
	F any    `json:"f" jsonschema_extras:"type=null"`
}

type genBase struct {
	ID      string `json:"id" jsonschema:"minLength=1"`
	Version int    `json:"version,omitempty"`
}

type genMore struct {
	Note string `json:"note" jsonschema:"oneof_required=g"`
}

type genEmbedding struct {
	genBase
	*genMore
	Named   genBase   `json:"named" jsonschema_description:"a named struct" jsonschema:"title=N,minLength=1"`
	Skipped string    `json:"-"`
	NoSchem string    `json:"noschema" jsonschema:"-"`
	hidden  string    // unexported: not a member
	Zero    time.Time `json:"zero,omitzero"`
	Untag   int
}

var _ = genEmbedding{hidden: ""} // set, never encoded

type genText float64

func (genText) MarshalText() ([]byte, error) { return nil, nil }
func (*genText) UnmarshalText([]byte) error  { return nil }

type genSpecial struct {
	T  time.Time       `json:"t" jsonschema:"format=date"`
	PT *time.Time      `json:"pt" jsonschema:"nullable"`
	R  json.RawMessage `json:"r" jsonschema_description:"raw" jsonschema:"minLength=1"`
	A  any             `json:"a" jsonschema:"enum=x,type=string,enum=y"`
	X  genText         `json:"x" jsonschema:"minLength=1"`
	PX *genText        `json:"px,omitempty"`
	S  *genBase        `json:"s" jsonschema:"nullable,description=base"`
	L  []genBase       `json:"l" jsonschema:"minItems=1"`
	E  struct{}        `json:"e"`
}

// TestTypeSchemaWritesWhatInvopopWrote holds the generator to what
// github.com/invopop/jsonschema v0.14.0, which derived agnara-go's
// schemas until ADR 71, wrote for the same types, recorded in
// testdata/schema/generated.golden before it was replaced: the published
// schemas of existing applications do not change. The record is not
// regenerated.
func TestTypeSchemaWritesWhatInvopopWrote(t *testing.T) {
	types := []reflect.Type{
		reflect.TypeFor[genStrings](), reflect.TypeFor[genNumbers](), reflect.TypeFor[genBooleans](),
		reflect.TypeFor[genArrays](), reflect.TypeFor[genMaps](), reflect.TypeFor[genAlternatives](),
		reflect.TypeFor[genExtras](), reflect.TypeFor[genEmbedding](), reflect.TypeFor[genSpecial](),
		reflect.TypeFor[[]genBase](), reflect.TypeFor[map[string]*genBase](), reflect.TypeFor[*genText](),
		reflect.TypeFor[any](), reflect.TypeFor[string](), reflect.TypeFor[[]byte](), reflect.TypeFor[struct{}](),
	}
	want := map[string]string{}
	f, err := os.Open("testdata/schema/generated.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, schema, _ := strings.Cut(sc.Text(), "\t")
		want[name] = schema
	}
	for _, typ := range types {
		for _, output := range []bool{false, true} {
			name := typ.String()
			if output {
				name += "/output"
			}
			t.Run(name, func(t *testing.T) {
				tree, err := typeSchema(typ, output)
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := writeOrdered(&got, tree); err != nil {
					t.Fatal(err)
				}
				if w, ok := want[name]; !ok || got.String() != w {
					t.Errorf("got  %s\nwant %s", got.String(), w)
				}
			})
		}
	}
}
