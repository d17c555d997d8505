package hostcheck_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/hostcheck"
)

func TestAllows(t *testing.T) {
	public, err := hostcheck.Of("https://Approvals.example.com/callback")
	if err != nil {
		t.Fatal(err)
	}
	onPort, err := hostcheck.Of("http://127.0.0.1:8095/callback")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host                     string
		loopback, public, onPort bool
	}{
		{"127.0.0.1:8095", true, false, true},
		{"127.0.0.1", true, false, false},
		{"127.1.2.3:8095", true, false, false},
		{"localhost:8095", true, false, false},
		{"LocalHost:8095", true, false, false},
		{"[::1]:8095", true, false, false},
		{"[::1]", true, false, false},
		{"[::ffff:127.0.0.1]:8095", true, false, false},
		{"approvals.example.com", false, true, false},
		{"APPROVALS.example.com:443", false, true, false},
		{"approvals.example.com:8443", false, false, false},
		{"approvals.example.com.", false, false, false},
		{"evil.example", false, false, false},
		{"evil.example:8095", false, false, false},
		{"localhost.evil.example:8095", false, false, false},
		{"evil.localhost:8095", false, false, false},
		{"127.0.0.1.nip.io:8095", false, false, false},
		{"10.0.0.5:8095", false, false, false},
		{"[::2]:8095", false, false, false},
		{"", false, false, false},
		{":8095", false, false, false},
		{"localhost:", false, false, false},
		{"localhost:80a", false, false, false},
		{"[::1", false, false, false},
		{"[::1]x", false, false, false},
		{"::1", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			for _, c := range []struct {
				name string
				h    hostcheck.Hosts
				want bool
			}{
				{"Loopback", hostcheck.Loopback(), tt.loopback},
				{"Of(https://approvals.example.com)", public, tt.public},
				{"Of(http://127.0.0.1:8095)", onPort, tt.onPort},
				{"zero", hostcheck.Hosts{}, false},
			} {
				if got := c.h.Allows(tt.host); got != c.want {
					t.Errorf("%s.Allows(%q) = %v, want %v", c.name, tt.host, got, c.want)
				}
			}
		})
	}
}

func TestOfRefusesWhatIsNotAPublicURL(t *testing.T) {
	for _, u := range []string{"", "approvals.example.com", "/callback", "ftp://approvals.example.com/", "https://", "https://:443/", "%zz"} {
		if _, err := hostcheck.Of(u); err == nil {
			t.Errorf("Of(%q) accepted", u)
		}
	}
}

func TestOfDefaultPorts(t *testing.T) {
	for _, c := range []struct {
		url, host string
		want      bool
	}{
		{"http://inbox.example/", "inbox.example", true},
		{"http://inbox.example/", "inbox.example:80", true},
		{"http://inbox.example/", "inbox.example:443", false},
		{"https://inbox.example:8443/", "inbox.example", false},
		{"https://inbox.example:8443/", "inbox.example:8443", true},
		{"http://inbox.example:443/", "inbox.example", false}, // no port is 80 for http
	} {
		h, err := hostcheck.Of(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Allows(c.host); got != c.want {
			t.Errorf("Of(%q).Allows(%q) = %v, want %v", c.url, c.host, got, c.want)
		}
	}
}

// TestHandlerRefusesFirst: a refused request never reaches the handler,
// gets 421 with a body that does not repeat its Host, and the refusal is
// reported.
func TestHandlerRefusesFirst(t *testing.T) {
	var reached, refused int
	h := hostcheck.Loopback().Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		io.WriteString(w, "inside")
	}), func(*http.Request) { refused++ })
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, c := range []struct {
		host   string
		status int
	}{
		{"evil.example:1234", http.StatusMisdirectedRequest},
		{strings.TrimPrefix(srv.URL, "http://"), http.StatusOK},
		{"localhost:1234", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader("x=1"))
		req.Host = c.host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("Host %s: %d %s, want %d", c.host, res.StatusCode, body, c.status)
		}
		if c.status != http.StatusOK && (strings.Contains(string(body), "evil") || strings.Contains(string(body), "inside") || res.Header.Get("Content-Type") != "text/plain; charset=utf-8") {
			t.Errorf("Host %s: the refusal is %q (%s)", c.host, body, res.Header.Get("Content-Type"))
		}
	}
	if reached != 2 || refused != 1 {
		t.Errorf("reached %d, refused %d; want 2 and 1", reached, refused)
	}
}

func ExampleOf() {
	h, err := hostcheck.Of("https://approvals.example.com/callback")
	if err != nil {
		panic(err)
	}
	for _, host := range []string{"approvals.example.com", "approvals.example.com:443", "evil.example", "127.0.0.1:8095"} {
		fmt.Println(host, h.Allows(host))
	}
	// Output:
	// approvals.example.com true
	// approvals.example.com:443 true
	// evil.example false
	// 127.0.0.1:8095 false
}

// TestOnLoopbackListener: on a loopback listener only loopback names get
// through; on any other listener every name does, as behind a proxy.
func TestOnLoopbackListener(t *testing.T) {
	var reached int
	h := hostcheck.OnLoopbackListener(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		io.WriteString(w, "inside")
	}), nil)
	srv := httptest.NewServer(h) // on 127.0.0.1
	defer srv.Close()
	for _, c := range []struct {
		host   string
		status int
	}{
		{"evil.example", http.StatusMisdirectedRequest},
		{"127.0.0.1.nip.io:80", http.StatusMisdirectedRequest},
		{strings.TrimPrefix(srv.URL, "http://"), http.StatusOK},
		{"localhost", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/healthz", nil)
		req.Host = c.host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("loopback listener, Host %s: %d %s, want %d", c.host, res.StatusCode, body, c.status)
		}
	}
	if reached != 2 {
		t.Errorf("reached %d times, want 2", reached)
	}

	// A listener on another address: the request as net/http hands it
	// over, with the connection's local address in its context.
	for _, local := range []net.Addr{
		&net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 8080},
		&net.TCPAddr{IP: net.IPv6zero, Port: 8080},
	} {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Host = "mcp.example.com"
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("listener %s, Host mcp.example.com: %d, want 200", local, rec.Code)
		}
	}
	loop := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	loop.Host = "mcp.example.com"
	loop = loop.WithContext(context.WithValue(loop.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, loop)
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("listener [::1]:8080, Host mcp.example.com: %d, want 421", rec.Code)
	}
}
