package health

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReady(t *testing.T) {
	secret := errors.New("dial postgres://bob:hunter2@db:5432: refused")
	ok := func(context.Context) error { return nil }
	fails := func(context.Context) error { return secret }
	blocks := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() } // ends at DefaultTimeout or the request's end
	for _, c := range []struct {
		name   string
		checks []Check
		status int
		body   string
	}{
		{"none", nil, 200, "ready\n"},
		{"all answer", []Check{{Name: "redis", Probe: ok}, {Name: "postgres", Probe: ok}}, 200, "ready\nredis: ok\npostgres: ok\n"},
		{"one fails", []Check{{Name: "redis", Probe: ok}, {Name: "postgres", Probe: fails}}, 503, "not ready\nredis: ok\npostgres: unreachable\n"},
		{"a degrading one fails", []Check{{Name: "upstream a", Probe: fails, Degrades: true}, {Name: "upstreams", Probe: ok}}, 200, "ready\nupstream a: unreachable\nupstreams: ok\n"},
		{"one never answers", []Check{{Name: "redis", Probe: blocks}}, 503, "not ready\nredis: unreachable\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			h := Ready(func() []Check { return c.checks }, slog.New(slog.NewTextHandler(&log, nil)))
			ctx, cancel := context.WithCancel(context.Background())
			if c.name == "one never answers" {
				cancel() // the request ended: the probe's context ends with it, as at DefaultTimeout
			}
			defer cancel()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil).WithContext(ctx))
			body, _ := io.ReadAll(rec.Body)
			if diff := cmp.Diff(struct {
				Status int
				Body   string
			}{c.status, c.body}, struct {
				Status int
				Body   string
			}{rec.Code, string(body)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if strings.Contains(string(body), "hunter2") {
				t.Errorf("the body carries the error: %q", body)
			}
			if failed := strings.Contains(c.body, "unreachable"); failed != strings.Contains(log.String(), "readiness check failed") {
				t.Errorf("log %q for body %q", log.String(), c.body)
			}
			if rec.Header().Get("Cache-Control") != "no-store" {
				t.Error("a readiness answer may be cached")
			}
		})
	}
}

func TestLive(t *testing.T) {
	rec := httptest.NewRecorder()
	Live().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
		t.Errorf("/healthz = %d %q", rec.Code, rec.Body.String())
	}
}
