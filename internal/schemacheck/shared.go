package schemacheck

import (
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxShared bounds the validators kept by [CompileShared]. Applications
// publish a few hundred distinct schemas at most; a process that compiles
// many more (an importer following live remote catalogs, say) keeps
// working, and recompiles.
const maxShared = 4096

// shared caches compiled validators by schema text. A compiled schema is
// immutable and safe for concurrent use, so every caller that compiles the
// same bytes can share one: tools over one type, tools without input, and
// the output envelopes of tools returning the same type.
var shared = struct {
	sync.Mutex
	m map[string]*jsonschema.Schema
}{m: map[string]*jsonschema.Schema{}}

// CompileShared is [Compile], sharing the result with every other caller
// that compiles the same schema text. Failures are not kept. The cache holds
// at most maxShared validators; when it is full it starts over.
func CompileShared(schema []byte) (*jsonschema.Schema, error) {
	shared.Lock()
	v, ok := shared.m[string(schema)]
	shared.Unlock()
	if ok {
		return v, nil
	}
	v, err := Compile(schema)
	if err != nil {
		return nil, err
	}
	shared.Lock()
	defer shared.Unlock()
	if prev, ok := shared.m[string(schema)]; ok {
		return prev, nil // compiled concurrently: keep one
	}
	if len(shared.m) >= maxShared {
		clear(shared.m)
	}
	shared.m[string(schema)] = v
	return v, nil
}
