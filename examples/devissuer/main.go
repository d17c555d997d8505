// Command devissuer is a tiny local OAuth 2.1 / OpenID Connect issuer for
// trying agnara-go's token flow, and signing users in, on one machine.
//
// DEVELOPMENT ONLY — NOT FOR PRODUCTION. It knows one client whose secret is
// a command-line flag, keeps its signing key in memory (a new one on every
// start, so earlier tokens stop verifying), signs anyone in under any user
// name without a password, has no revocation and no rate limiting, and
// refuses to listen on anything but a loopback address. It answers only
// requests for a loopback name (Host localhost, 127.0.0.1 or [::1]), so a
// web page whose name is rebound to 127.0.0.1 gets 421.
//
// It serves:
//
//	GET  /.well-known/openid-configuration        discovery
//	GET  /.well-known/oauth-authorization-server  the same, as RFC 8414 metadata
//	GET  /jwks                                    the public signing key
//	GET  /authorize                               the authorization endpoint: a sign-in page
//	POST /authorize                               the sign-in form: redirects with a code
//	POST /token                                   the authorization_code and client_credentials grants
//
// The authorization code flow is OpenID Connect's, with PKCE (S256)
// required, a state required, and redirect URIs on loopback hosts
// (127.0.0.1, [::1], localhost; any port and path) or given exactly with
// -redirect-uris. The sign-in page asks for a user name (input id "user")
// and the scopes to grant (input id "scopes", prefilled with the requested
// ones), submitted with the button id "sign-in". Codes are single use and
// live 60 seconds.
//
// Access tokens are RS256 JWTs (RFC 9068) with iss, sub, aud, client_id,
// scope, iat, nbf, exp and jti: sub is the client id for client_credentials
// and the user name for authorization_code. The aud is the RFC 8707
// resource parameter, or -audience when there is none. ID tokens, RS256
// with the same key, carry iss, sub, aud (the client id), iat, exp,
// auth_time, nonce, at_hash, preferred_username and, as a development
// convenience, scope.
//
// The first line on standard output is the issuer URL; logs go to standard
// error. The three-command flow:
//
//	go run ./examples/devissuer
//	go run ./examples/users -issuer http://127.0.0.1:9000
//	go run ./examples/client -scope users:read -tool users.list_users
//
// Flags:
//
//	-addr           loopback address to listen on (default 127.0.0.1:9000)
//	-client-id      the one client's id (default demo)
//	-client-secret  its secret (default demo-secret)
//	-scopes         space-separated scopes the client may ask for, besides
//	                openid (default "users:read users:write users:admin")
//	-audience       aud of access tokens requested without a resource
//	                parameter (default http://127.0.0.1:8080/mcp)
//	-ttl            access token and ID token lifetime (default 15m)
//	-redirect-uris  exact redirect URIs accepted besides loopback http ones
//	                (comma-separated; repeatable; default none)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
)

const banner = "devissuer is for LOCAL DEVELOPMENT ONLY — NOT FOR PRODUCTION: fixed client secret, in-memory key, sign-in as anyone without a password"

func main() {
	fs := flag.NewFlagSet("devissuer", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: devissuer [flags]\n\n%s.\n\nFlags:\n", banner)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:9000", "loopback `host:port` to listen on; port 0 picks a free one")
	clientID := fs.String("client-id", "demo", "the one client's `id`")
	clientSecret := fs.String("client-secret", "demo-secret", "the client's `secret`")
	scopes := fs.String("scopes", "users:read users:write users:admin", "space-separated `scopes` the client may ask for, besides openid")
	audience := fs.String("audience", "http://127.0.0.1:8080/mcp", "aud of tokens requested without a resource parameter (an absolute http(s) `URL`)")
	ttl := fs.Duration("ttl", 15*time.Minute, "access token and ID token `lifetime`")
	var redirectURIs []string
	fs.Func("redirect-uris", "exact redirect `URIs` accepted besides loopback http ones (comma-separated; repeatable)", func(s string) error {
		redirectURIs = append(redirectURIs, splitList(s)...)
		return nil
	})
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "devissuer: unexpected arguments %q: every setting is a flag (see -help)\n", fs.Args())
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := log.New(os.Stderr, "devissuer: ", log.LstdFlags)
	err := serve(ctx, os.Stdout, logger, *addr, issuerConfig{
		ClientID:     *clientID,
		ClientSecret: *clientSecret,
		Scopes:       strings.Fields(*scopes),
		Audience:     *audience,
		TTL:          *ttl,
		RedirectURIs: redirectURIs,
		Logger:       logger,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "devissuer:", err)
		os.Exit(1)
	}
}

// serve listens on addr, which must be a loopback address, prints the
// issuer URL as the first line on stdout and serves until ctx is done. A nil
// logger discards.
func serve(ctx context.Context, stdout io.Writer, logger *log.Logger, addr string, cfg issuerConfig) error {
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	host, err := loopbackHost(addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w (is another devissuer already running? pick another port)", addr, err)
	}
	defer ln.Close()
	// Keep the host as given (clients must use the same issuer URL), but
	// take the port from the listener so that port 0 works.
	port := ln.Addr().(*net.TCPAddr).Port
	cfg.Issuer = "http://" + net.JoinHostPort(host, strconv.Itoa(port))

	is, err := newIssuer(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, cfg.Issuer)
	logger.Print(banner)
	logger.Printf("issuer %s: client %q, scopes %q, default audience %s, tokens live %v",
		cfg.Issuer, cfg.ClientID, strings.Join(cfg.Scopes, " "), cfg.Audience, cfg.TTL)
	logger.Printf("sign-in at %s%s: redirect URIs on loopback hosts%s", cfg.Issuer, pathAuthorize, orList(cfg.RedirectURIs))

	srv := mcpexpose.NewHTTPServer(is, nil) // the same hardened timeouts as the MCP servers
	srv.ErrorLog = logger
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// orList is ", or " and the items, or "" when there are none.
func orList(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ", or " + strings.Join(items, ", ")
}

// loopbackHost returns the host part of addr if it is a loopback IP address
// or "localhost".
func loopbackHost(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-addr %q is not host:port, such as 127.0.0.1:9000", addr)
	}
	if host == "localhost" {
		return host, nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return host, nil
	}
	return "", fmt.Errorf("-addr %q is not a loopback address: devissuer is for local development only and listens on 127.0.0.1, [::1] or localhost, such as -addr 127.0.0.1:9000", addr)
}
