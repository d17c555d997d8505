package gateway_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/gateway"
)

// TestLimitBodies: responses to POSTs are cut at the bound (exactly the
// bound is fine); GET streams are not bounded.
func TestLimitBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		io.WriteString(w, strings.Repeat("x", n))
	}))
	defer srv.Close()
	const max = 1000
	hc := &http.Client{Transport: gateway.LimitBodies(http.DefaultTransport, max)}
	for _, tc := range []struct {
		method string
		n      int
		err    error
	}{
		{http.MethodPost, max, nil},
		{http.MethodPost, max + 1, gateway.ErrBodyTooLarge},
		{http.MethodPost, 10 * max, gateway.ErrBodyTooLarge},
		{http.MethodGet, 10 * max, nil},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+"?n="+strconv.Itoa(tc.n), nil)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if !errors.Is(err, tc.err) || (tc.err == nil && len(body) != tc.n) {
			t.Errorf("%s of %d bytes: read %d, %v; want %v", tc.method, tc.n, len(body), err, tc.err)
		}
	}
}
