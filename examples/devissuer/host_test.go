package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAnswersOnlyLoopbackNames: a request whose Host is not a loopback
// name — a page on a name rebound to 127.0.0.1 — is refused with 421
// before anything else: no metadata, no sign-in kept or completed, no
// token issued. Requests for localhost, 127.0.0.1 and [::1] are answered.
func TestAnswersOnlyLoopbackNames(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	is, err := newIssuer(issuerConfig{Issuer: base, ClientID: "demo", ClientSecret: "demo-secret", Scopes: []string{"users:read", "users:write"},
		Audience: "http://127.0.0.1:8080/mcp", TTL: 15 * time.Minute, Key: sharedKey(t), Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = is
	srv.Start()
	t.Cleanup(srv.Close)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	rebound := "evil.example:" + port

	send := func(host, method, path string, form url.Values, header map[string]string) (int, string) {
		t.Helper()
		var req *http.Request
		if form != nil {
			req, _ = http.NewRequest(method, base+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req, _ = http.NewRequest(method, base+path, nil)
		}
		req.Host = host
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, readBody(t, res)
	}

	// A sign-in under way, started at the issuer's own name: the rebound
	// page must not be able to complete it either.
	requestID, _ := openSignIn(t, base, authQuery("verifier-verifier-verifier-verifier-verifier-123"))
	pendingBefore := len(is.pending.entries)
	rebind := map[string]string{"Origin": "http://" + rebound, "Sec-Fetch-Site": "same-origin"}
	for _, c := range []struct {
		method, path string
		form         url.Values
	}{
		{http.MethodGet, pathOIDCDiscovery, nil},
		{http.MethodGet, pathJWKS, nil},
		{http.MethodGet, pathAuthorize + "?" + authQuery("verifier-verifier-verifier-verifier-verifier-456").Encode(), nil},
		{http.MethodPost, pathAuthorize, url.Values{"request": {requestID}, "user": {"alice"}, "scopes": {"users:read"}, "action": {"sign-in"}}},
		{http.MethodPost, pathToken, url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo"}, "client_secret": {"demo-secret"}}},
	} {
		status, body := send(rebound, c.method, c.path, c.form, rebind)
		if status != http.StatusMisdirectedRequest || strings.Contains(body, `"access_token"`) || strings.Contains(body, `name="request"`) || strings.Contains(body, `"keys"`) || strings.Contains(body, `"issuer"`) {
			t.Errorf("%s %s as %s: %d\n%s", c.method, c.path, rebound, status, body)
		}
	}
	if n := len(is.pending.entries); n != pendingBefore {
		t.Errorf("%d sign-ins kept, want %d: a rebound request started one", n, pendingBefore)
	}
	if n := len(is.codes.entries); n != 0 {
		t.Errorf("%d codes issued to a rebound request, want none", n)
	}

	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port} {
		if status, body := send(host, http.MethodGet, pathOIDCDiscovery, nil, nil); status != http.StatusOK || !strings.Contains(body, `"issuer"`) {
			t.Errorf("discovery as %s: %d\n%s", host, status, body)
		}
		status, body := send(host, http.MethodPost, pathToken, url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo"}, "client_secret": {"demo-secret"}}, nil)
		if status != http.StatusOK || !strings.Contains(body, "access_token") {
			t.Errorf("token as %s: %d\n%s", host, status, body)
		}
	}
}
