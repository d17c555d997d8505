package mcpexpose

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// sessionServer serves a handler for storeSnapshot on loopback.
func sessionServer(t *testing.T, opts *HandlerOptions) (*Handler, *httptest.Server) {
	t.Helper()
	h, err := NewHandler(storeSnapshot(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

// initialize opens a handshake-era session with token ("" for none) and
// returns the answer's status, session id, Retry-After and body.
func initialize(t *testing.T, url, token string) (status int, session, retryAfter, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, b := legacyDo(t, req)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), resp.Header.Get("Retry-After"), string(b)
}

// deleteSession ends session with a DELETE and returns the status.
func deleteSession(t *testing.T, url, session, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, _ := legacyDo(t, req)
	return resp.StatusCode
}

// liveSessions counts the SDK's sessions of the handler's server (the
// stateless handler's are closed when their request ends).
func liveSessions(h *Handler) int {
	n := 0
	for range h.srv.mcp.Sessions() {
		n++
	}
	return n
}

// eventually polls cond every 20 ms for up to 20 s: a bound for a loaded
// machine, not a duration the test waits.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 20s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// heapAfterGC returns the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// flood sends n initializes and returns the sessions opened and the number
// refused with 503 and Retry-After, naming limit.
func flood(t *testing.T, url string, n int, limit string) (opened []string, refused int) {
	t.Helper()
	for range n {
		status, session, retry, body := initialize(t, url, "")
		switch {
		case status == http.StatusOK && session != "":
			opened = append(opened, session)
		case status == http.StatusServiceUnavailable && retry == "30" && strings.Contains(body, "limit "+limit) && strings.Contains(body, `"code":-32000`):
			refused++
		default:
			t.Fatalf("initialize: HTTP %d, session %q, Retry-After %q: %s", status, session, retry, body)
		}
	}
	return opened, refused
}

// TestSessionFloodIsBounded opens sessions in a row, as the client in
// issue 16 did: past MaxSessions every initialize gets 503 with
// Retry-After, the SDK holds no more sessions than the cap, and the heap
// grows with the cap, not with the flood. The refusals are logged once.
func TestSessionFloodIsBounded(t *testing.T) {
	const n, max = 2000, 100
	var logs mcptest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))

	before := heapAfterGC()
	h, srv := sessionServer(t, &HandlerOptions{Server: &ServerOptions{Logger: logger}, Limits: &Limits{MaxSessions: max}})
	opened, refused := flood(t, srv.URL, n, limitSessions)
	capped := int64(heapAfterGC()) - int64(before)
	if len(opened) != max || refused != n-max {
		t.Fatalf("opened %d and refused %d of %d initializes, want %d and %d", len(opened), refused, n, max, n-max)
	}
	if got := liveSessions(h); got != max {
		t.Errorf("the SDK holds %d sessions, want %d", got, max)
	}
	if total, _ := h.sessions.count(""); total != max {
		t.Errorf("counted %d sessions, want %d", total, max)
	}
	if got := strings.Count(logs.String(), "session refused: limit reached"); got != 1 {
		t.Errorf("%d refusal records for %d refusals, want 1:\n%s", got, refused, logs.String())
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "limit=MaxSessions") {
		t.Errorf("refusal record is not a warning naming the limit:\n%s", logs.String())
	}
	// The next window's first refusal writes the count held back.
	h.sessions.rate.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if status, _, _, _ := initialize(t, srv.URL, ""); status != http.StatusServiceUnavailable {
		t.Fatalf("initialize past the cap: HTTP %d", status)
	}
	if want := "more sessions refused than logged\" count=1899"; !strings.Contains(logs.String(), want) {
		t.Errorf("no %s record:\n%s", want, logs.String())
	}

	// The same flood without a cap, for comparison.
	before = heapAfterGC()
	hu, srvu := sessionServer(t, &HandlerOptions{Limits: &Limits{MaxSessions: -1, MaxSessionsPerPrincipal: -1}})
	openedu, _ := flood(t, srvu.URL, n, limitSessions)
	uncapped := int64(heapAfterGC()) - int64(before)
	if len(openedu) != n || liveSessions(hu) != n {
		t.Fatalf("without a cap: opened %d, the SDK holds %d, want %d", len(openedu), liveSessions(hu), n)
	}
	t.Logf("heap growth after %d initializes: %.1f MiB with MaxSessions %d, %.1f MiB without a cap",
		n, float64(capped)/(1<<20), max, float64(uncapped)/(1<<20))
	if capped*4 > uncapped {
		t.Errorf("heap grew %d bytes with the cap, %d without: want under a quarter", capped, uncapped)
	}
	for _, s := range openedu {
		deleteSession(t, srvu.URL, s, "")
	}
	if got := liveSessions(hu); got != 0 {
		t.Errorf("%d sessions left after DELETE", got)
	}
}

// TestClosedSessionsFreeTheirSlots: a DELETE, an idle timeout and a failed
// initialization each give their slot back; a POST without a session that
// is not an initialize takes none.
func TestClosedSessionsFreeTheirSlots(t *testing.T) {
	// The second session must outlive four requests on a loaded machine
	// before it idles out.
	h, srv := sessionServer(t, &HandlerOptions{Limits: &Limits{MaxSessions: 2, SessionTimeout: time.Second}})
	open := func() string {
		t.Helper()
		status, session, _, body := initialize(t, srv.URL, "")
		if status != http.StatusOK || session == "" {
			t.Fatalf("initialize within the cap: HTTP %d: %s", status, body)
		}
		return session
	}
	full := func() {
		t.Helper()
		if status, _, retry, body := initialize(t, srv.URL, ""); status != http.StatusServiceUnavailable || retry == "" {
			t.Fatalf("initialize past the cap: HTTP %d, Retry-After %q: %s", status, retry, body)
		}
	}
	a := open()
	open()
	full()
	if status := deleteSession(t, srv.URL, a, ""); status != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d", status)
	}
	open()
	full()

	// Idle timeout: no request on either session, so both end.
	eventually(t, "idle sessions free their slots", func() bool {
		total, _ := h.sessions.count("")
		return total == 0 && liveSessions(h) == 0
	})
	open()

	// Requests for which the SDK makes a session that never becomes one.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}`,
	} {
		resp, b := legacyPost(t, srv.URL, "", body)
		if resp.Header.Get("Mcp-Session-Id") != "" && resp.StatusCode == http.StatusOK && !strings.Contains(string(b), "error") {
			t.Fatalf("%s opened a session: %s", body, b)
		}
		eventually(t, "a failed session-less POST keeps no slot", func() bool {
			total, _ := h.sessions.count("")
			return total == 1 && liveSessions(h) == 1
		})
	}
	open()
	full()
}

// sessionTokens is a verifier: "alice-<n>" and "bob-<n>" are alice and bob,
// valid for an hour; "brief" expires at the time stored in briefExpiry.
type sessionTokens struct{ briefExpiry atomic.Int64 }

func (v *sessionTokens) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	switch {
	case token == "brief":
		return &auth.TokenInfo{UserID: "brenda", Expiration: time.Unix(0, v.briefExpiry.Load())}, nil
	case strings.HasPrefix(token, "alice"):
		return &auth.TokenInfo{UserID: "alice", Expiration: time.Now().Add(time.Hour)}, nil
	case strings.HasPrefix(token, "bob"):
		return &auth.TokenInfo{UserID: "bob", Expiration: time.Now().Add(time.Hour)}, nil
	}
	return nil, auth.ErrInvalidToken
}

// TestSessionsPerPrincipal: one principal's sessions are capped, however
// many tokens it holds, without taking the slots of another; callers
// without a token count as one principal, unless there are no tokens at
// all.
func TestSessionsPerPrincipal(t *testing.T) {
	var v sessionTokens
	h, srv := sessionServer(t, &HandlerOptions{Tokens: v.verify, AllowAnonymous: true, Limits: &Limits{MaxSessionsPerPrincipal: 2}})
	for _, caller := range []string{"alice-1", "bob-1", ""} {
		var sessions []string
		for i := range 2 {
			status, session, _, body := initialize(t, srv.URL, caller)
			if status != http.StatusOK || session == "" {
				t.Fatalf("%q initialize %d: HTTP %d: %s", caller, i, status, body)
			}
			sessions = append(sessions, session)
		}
		status, _, retry, body := initialize(t, srv.URL, strings.Replace(caller, "1", "2", 1))
		if status != http.StatusServiceUnavailable || retry == "" || !strings.Contains(body, "limit "+limitSessionsPerPrincipal) {
			t.Fatalf("%q third initialize: HTTP %d, Retry-After %q: %s", caller, status, retry, body)
		}
		if caller == "alice-1" {
			if status := deleteSession(t, srv.URL, sessions[0], "alice-2"); status != http.StatusNoContent {
				t.Fatalf("DELETE: HTTP %d", status)
			}
			if status, _, _, body := initialize(t, srv.URL, "alice-2"); status != http.StatusOK {
				t.Fatalf("initialize after DELETE: HTTP %d: %s", status, body)
			}
		}
	}
	if got := liveSessions(h); got != 6 {
		t.Errorf("the SDK holds %d sessions, want 6", got)
	}

	// Without tokens the per-principal cap would be a second, smaller
	// MaxSessions: it does not apply.
	_, open := sessionServer(t, &HandlerOptions{Limits: &Limits{MaxSessionsPerPrincipal: 2}})
	for i := range 3 {
		if status, _, _, body := initialize(t, open.URL, ""); status != http.StatusOK {
			t.Fatalf("tokenless initialize %d: HTTP %d: %s", i, status, body)
		}
	}
}

// TestSessionEndsWhenTokenExpires: a session opened with a token ends at
// the token's expiry, its open GET stream with it, and its next request
// gets 404; a session whose token is still valid goes on.
func TestSessionEndsWhenTokenExpires(t *testing.T) {
	var v sessionTokens
	// Long enough for two initializes and a GET on a loaded machine: the
	// stream must be open before the token expires.
	v.briefExpiry.Store(time.Now().Add(time.Second).UnixNano())
	h, srv := sessionServer(t, &HandlerOptions{Tokens: v.verify})

	status, brief, _, body := initialize(t, srv.URL, "brief")
	if status != http.StatusOK || brief == "" {
		t.Fatalf("initialize: HTTP %d: %s", status, body)
	}
	status, lasting, _, body := initialize(t, srv.URL, "alice")
	if status != http.StatusOK || lasting == "" {
		t.Fatalf("initialize: HTTP %d: %s", status, body)
	}

	// The standalone GET stream, which sends no request.
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", brief)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer brief")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: HTTP %d", resp.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the GET stream of a session whose token expired is still open after 5s")
	}

	// The verifier accepts the token within its leeway; the session is
	// gone all the same.
	ping := func(session, token string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, _ := legacyDo(t, req)
		return resp.StatusCode
	}
	// The SDK forgets a closed session just after its stream ends: allow it
	// a moment.
	status = ping(brief, "brief")
	for deadline := time.Now().Add(5 * time.Second); status != http.StatusNotFound && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		status = ping(brief, "brief")
	}
	if status != http.StatusNotFound {
		t.Errorf("request on the expired session: HTTP %d, want 404 within 5s", status)
	}
	if status := ping(lasting, "alice"); status != http.StatusOK {
		t.Errorf("request on the valid session: HTTP %d, want 200", status)
	}
	eventually(t, "the expired session's slot is freed", func() bool {
		total, _ := h.sessions.count("")
		return total == 1 && liveSessions(h) == 1
	})
}
