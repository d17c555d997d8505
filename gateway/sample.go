package gateway

import _ "embed"

// Sample is a commented gateway.yaml: two stdio upstreams from npm, a read
// and a write behind approvals, development auth. `agnara gateway -sample`
// prints it.
//
//go:embed sample.yaml
var Sample []byte
