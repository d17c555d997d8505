package mcpexpose

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadBody: readBody reads what io.ReadAll reads, under the size
// limit, whatever length the request declares.
func TestReadBody(t *testing.T) {
	const max = 64
	for _, tc := range []struct {
		name     string
		body     string
		declared int64
	}{
		{"declared", `{"a":1}`, 7},
		{"undeclared", `{"a":1}`, -1},
		{"empty", ``, 0},
		{"longer than declared", `{"a":12345}`, 3},
		{"shorter than declared", `{"a":1}`, 20},
		{"over the limit, declared", strings.Repeat("x", max+1), max + 1},
		{"over the limit, declared under it", strings.Repeat("x", max+10), 10},
		{"at the limit", strings.Repeat("x", max), max},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(tc.body)), max))
			got, err := readBody(http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(tc.body)), max), tc.declared, max)
			var wantBig, gotBig *http.MaxBytesError
			if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) || errors.As(err, &gotBig) != errors.As(wantErr, &wantBig) {
				t.Errorf("readBody = %q, %v; io.ReadAll = %q, %v", got, err, want, wantErr)
			}
		})
	}
}
