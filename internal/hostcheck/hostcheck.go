// Package hostcheck decides whether a request's Host names the server it
// reached. It is the defence against DNS rebinding: a page on a name the
// attacker controls re-resolves that name to 127.0.0.1, and the browser
// then treats a local server as the page's own origin — it sends the
// page's requests there, lets the page read the answers, and sends an
// Origin that agrees with the Host, so cross-origin checks pass. Only the
// Host header still carries the attacker's name, so a server that answers
// only its own names refuses the whole attack before anything else runs.
//
// A server on a loopback address for development answers the loopback
// names ([Loopback]); one with a public URL answers that URL's host and
// port only ([Of]).
package hostcheck

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Hosts is the set of Host header values a server answers. The zero value
// answers none. A Hosts is immutable and safe for concurrent use.
type Hosts struct {
	loopback bool
	// Of's: the name in lower case, the port (the scheme's default when
	// the URL names none), and the scheme's default port, which a Host
	// without a port stands for.
	host, port, schemePort string
}

// Loopback answers the loopback names, on any port: localhost and the
// loopback IP literals (127.0.0.0/8, ::1). None of them can be made to
// name another machine, so a page on any other name is refused. It is for
// development servers listening on a loopback address.
func Loopback() Hosts { return Hosts{loopback: true} }

// Of answers exactly the host and port of publicURL, an absolute http or
// https URL such as https://approvals.example.com/callback: the name people
// and the identity provider use for the server. A Host without a port
// stands for the scheme's default port (80, 443), so behind a proxy that
// terminates TLS "approvals.example.com" is still that URL's host. Names
// are compared ignoring ASCII case; a trailing dot is another name.
func Of(publicURL string) (Hosts, error) {
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return Hosts{}, fmt.Errorf("hostcheck: %q is not an absolute http or https URL", publicURL)
	}
	schemePort := map[string]string{"http": "80", "https": "443"}[u.Scheme]
	port := u.Port()
	if port == "" {
		port = schemePort
	}
	return Hosts{host: strings.ToLower(u.Hostname()), port: port, schemePort: schemePort}, nil
}

// Allows reports whether host, a request's Host header value (r.Host:
// "name", "name:port", "[v6]:port"), is one this server answers. An empty
// or malformed Host is never allowed.
func (h Hosts) Allows(host string) bool {
	name, port, err := split(host)
	if err != nil {
		return false
	}
	if h.loopback {
		return isLoopback(name)
	}
	if h.host == "" {
		return false
	}
	if port == "" {
		port = h.schemePort
	}
	return strings.EqualFold(name, h.host) && port == h.port
}

// split parses a Host header value into its name (brackets removed) and
// port ("" when there is none).
func split(host string) (name, port string, err error) {
	if host == "" {
		return "", "", errors.New("empty host")
	}
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", "", errors.New("unclosed bracket")
		}
		name, rest := host[1:end], host[end+1:]
		switch {
		case rest == "":
		case strings.HasPrefix(rest, ":"):
			port = rest[1:]
		default:
			return "", "", errors.New("junk after the bracket")
		}
		return name, port, checkPort(port)
	}
	if strings.Count(host, ":") > 1 {
		return "", "", errors.New("an IPv6 literal needs brackets")
	}
	name, port, ok := strings.Cut(host, ":")
	if ok && port == "" {
		return "", "", errors.New("empty port")
	}
	if name == "" {
		return "", "", errors.New("empty name")
	}
	return name, port, checkPort(port)
}

func checkPort(port string) error {
	for _, c := range port {
		if c < '0' || c > '9' {
			return errors.New("the port is not a number")
		}
	}
	return nil
}

// isLoopback reports whether name is localhost or a loopback IP literal.
func isLoopback(name string) bool {
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

// Refuse answers a request whose Host is not allowed: 421 Misdirected
// Request, with a short text that does not repeat the Host.
//
// 421 rather than 403: the request is not forbidden to its sender, it was
// sent to a server that is not the one its URL names (RFC 9110, section
// 15.5.20), which is exactly what a rebound name is. It also sets the
// refusal apart from the inbox's own 403s (another site's POST, a missing
// token), so an operator whose proxy rewrites Host sees at once what to fix.
func Refuse(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusMisdirectedRequest)
	fmt.Fprintln(w, "421 misdirected request: this server does not answer for that host name")
}

// Handler returns next behind the check: a request whose Host is not
// allowed is answered by [Refuse], and next never sees it. refused, when
// not nil, is told of each refusal first (to log it).
func (h Hosts) Handler(next http.Handler, refused func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Allows(r.Host) {
			if refused != nil {
				refused(r)
			}
			Refuse(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// String describes what h answers, for logs: "loopback names" or the
// public host and port.
func (h Hosts) String() string {
	switch {
	case h.loopback:
		return "loopback names"
	case h.host == "":
		return "no host"
	}
	return net.JoinHostPort(h.host, h.port)
}

// OnLoopbackListener returns next behind the rule the MCP SDK's streamable
// handler applies to its own endpoint: a request that arrived on a
// connection to a loopback address must name a loopback host
// ([Loopback]); a request on any other address is passed on whatever its
// Host, as behind a proxy, which chooses the names itself. It is for the
// routes a server serves beside its MCP endpoint (health, debug
// variables, profiles) when the server may run both ways: locally for
// development, where a rebound page could otherwise read them, and behind
// a proxy in production. A refusal is answered as [Refuse] answers it;
// refused, when not nil, is told of each first.
func OnLoopbackListener(next http.Handler, refused func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil && onLoopback(local) && !Loopback().Allows(r.Host) {
			if refused != nil {
				refused(r)
			}
			Refuse(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// onLoopback reports whether a listener's address is a loopback one.
func onLoopback(a net.Addr) bool {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}
