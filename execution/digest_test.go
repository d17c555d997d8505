package execution_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/execution"
)

func TestArgumentsDigest(t *testing.T) {
	same := [][]string{
		{`{"a":1,"b":[1,2]}`, ` { "b" : [1, 2], "a" : 1 } `, `{"b":[1,2],"a":1.0}`, `{"a":1e0,"b":[1,2]}`},
		{``, `null`, `{}`, ` {} `},
		{`{"x":-0}`, `{"x":0}`, `{"x":-0.0}`},
		{`{"s":"\u00e9"}`, `{"s":"é"}`},
		{`{"k":1,"k":2}`, `{"k":2}`},
	}
	var digests []string
	for _, group := range same {
		first, err := execution.ArgumentsDigest(json.RawMessage(group[0]))
		if err != nil || !strings.HasPrefix(first, "sha256:") || len(first) != len("sha256:")+64 {
			t.Fatalf("ArgumentsDigest(%s) = %q, %v", group[0], first, err)
		}
		for _, other := range group[1:] {
			if d, _ := execution.ArgumentsDigest(json.RawMessage(other)); d != first {
				t.Errorf("%s and %s digest differently", group[0], other)
			}
		}
		digests = append(digests, first)
	}
	for i := range digests {
		for j := i + 1; j < len(digests); j++ {
			if digests[i] == digests[j] {
				t.Errorf("groups %d and %d digest alike", i, j)
			}
		}
	}
	for _, bad := range []string{`{`, `{"a":1} x`, `{"n":1e999}`} {
		if _, err := execution.ArgumentsDigest(json.RawMessage(bad)); err == nil {
			t.Errorf("ArgumentsDigest(%s) succeeded", bad)
		}
	}
}
