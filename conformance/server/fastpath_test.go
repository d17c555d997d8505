package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
)

// What differs by nature between two servers: sealed state (a key per
// server), task ids and times, retry delays, event ids.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"requestState":"[^"]*"`), `"requestState":"…"`},
	{regexp.MustCompile(`"taskId":"[^"]*"`), `"taskId":"…"`},
	{regexp.MustCompile(`"(createdAt|lastUpdatedAt)":"[^"]*"`), `"$1":"…"`},
	{regexp.MustCompile(`(retry_after_ms\\?":)[0-9]+`), "${1}0"},
	{regexp.MustCompile(`(?m)^id: .*$`), "id: …"},
	{regexp.MustCompile(`task [0-9A-Za-z_-]{16,}`), "task …"},
}

// TestFastPathConformanceTraffic replays the 2026-07-28 requests of a
// recorded run of the official conformance suite
// (testdata/traffic-2026-07-28.jsonl, recorded with -record) against this
// fixture with the fast path and without it, in order, and requires equal
// answers: status, headers but Date, body (masked). Long-lived
// subscriptions/listen streams are left out: they end only when the
// client goes away.
//
// To record it again after the suite or the fixture changes: start the
// server with -record testdata/traffic-2026-07-28.jsonl (an empty file),
// run `npx --no-install conformance server --url URL --requirements
// 2026-07-28` from conformance/, and stop the server.
func TestFastPathConformanceTraffic(t *testing.T) {
	f, err := os.Open("testdata/traffic-2026-07-28.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var reqs []recorded
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var r recorded
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Body, `"subscriptions/listen"`) {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) < 100 {
		t.Fatalf("only %d recorded requests", len(reqs))
	}
	opts := mcpexpose.ServerOptions{Logger: slog.New(slog.DiscardHandler)}
	fastH, err := newHandler(opts, true)
	if err != nil {
		t.Fatal(err)
	}
	sdkH, err := newHandler(opts, false)
	if err != nil {
		t.Fatal(err)
	}
	fastSrv, sdkSrv := httptest.NewServer(fastH), httptest.NewServer(sdkH)
	defer fastSrv.Close()
	defer sdkSrv.Close()
	type answer struct {
		status int
		header http.Header
		body   string
	}
	send := func(url string, r recorded) answer {
		req, err := http.NewRequest("POST", url, strings.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range r.Header {
			req.Header[http.CanonicalHeaderKey(k)] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		mcptest.Unframe(resp.Header, string(b))
		body := string(b)
		for _, m := range masks {
			body = m.re.ReplaceAllString(body, m.with)
		}
		resp.Header.Del("Date")
		if resp.Header.Get("Content-Length") != "" {
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		return answer{resp.StatusCode, resp.Header, body}
	}
	fast := 0
	for i, r := range reqs {
		before := fastH.FastPathRequests()
		got, want := send(fastSrv.URL, r), send(sdkSrv.URL, r)
		if fastH.FastPathRequests() > before {
			fast++
		}
		same := got.status == want.status && got.body == want.body && len(got.header) == len(want.header)
		for k, v := range got.header {
			same = same && slices.Equal(v, want.header[k])
		}
		if !same {
			t.Errorf("request %d %s:\nfast: %d %v\n%s\nsdk:  %d %v\n%s", i, r.Body, got.status, got.header, got.body, want.status, want.header, want.body)
		}
	}
	t.Logf("fast path answered %d of %d recorded requests", fast, len(reqs))
	if fast < 50 {
		t.Errorf("the fast path answered only %d of the suite's requests", fast)
	}
}
