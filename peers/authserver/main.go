// Command authserver is a real OAuth 2.0 / OpenID Connect authorization
// server for agnara-go's tests, built on zitadel/oidc's op package and an
// in-memory storage: the authorization-code flow with PKCE and a login
// page, refresh tokens, client credentials, RFC 8693 token exchange,
// RFC 8707 resource indicators, RFC 7009 revocation, and RFC 8414 / OpenID
// discovery. Access tokens are RS256 JWTs.
//
// It listens on -addr (127.0.0.1:0 by default), prints its issuer URL
// (http://127.0.0.1:PORT) as the one line it ever writes to standard
// output, and serves until standard input reaches end of file (so that a
// test which dies never leaves it running), or SIGINT or SIGTERM. Its
// logs, on standard error, never carry a token, code, secret or password.
//
// It is a test peer: everything is in memory, the signing key is new at
// each start, and the issuer is plain http.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "`host:port` to listen on")
	configPath := flag.String("config", "", "JSON configuration `file` (clients, users, lifetimes)")
	exitOnEOF := flag.Bool("exit-on-eof", true, "exit when standard input reaches end of file")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{
		Level:       slog.LevelInfo,
		ReplaceAttr: redactQuery,
	}))
	if err := run(*addr, *configPath, *exitOnEOF, logger); err != nil {
		logger.Error("authserver", "error", err)
		os.Exit(1)
	}
}

// run serves until stdin closes (when exitOnEOF) or a signal arrives.
func run(addr, configPath string, exitOnEOF bool, logger *slog.Logger) error {
	cfg, err := loadConfig(configPath)
	if err != nil {
		return err
	}
	st, err := newStorage(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	issuer := issuerFor(ln.Addr().(*net.TCPAddr))
	handler, err := newHandler(issuer, st, logger)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if exitOnEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			logger.Info("standard input closed: stopping")
			stop()
		}()
	}

	srv := &http.Server{
		Handler:           accessLog(handler, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Println(issuer); err != nil {
		return err
	}
	logger.Info("serving", "issuer", issuer, "clients", len(cfg.Clients), "users", len(cfg.Users))

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// The test that started it has ended: nothing in flight matters, and
	// a client's connection dialled but never used would hold a graceful
	// shutdown for 5 s (net/http counts it active until then).
	if err := srv.Close(); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// issuerFor is the issuer URL of a listener: http://IP:PORT, with the
// loopback address for a listener on all interfaces.
func issuerFor(a *net.TCPAddr) string {
	ip := a.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return "http://" + net.JoinHostPort(ip.String(), fmt.Sprint(a.Port))
}

// redactQuery drops the query of any URL logged (zitadel logs the
// redirects of refused authorization requests), where a code or a state
// could be.
func redactQuery(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindString {
		return a
	}
	v := a.Value.String()
	if !strings.Contains(v, "?") {
		return a
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		u.RawQuery, u.Fragment = "", ""
		return slog.String(a.Key, u.String()+"?[redacted]")
	}
	return a
}

// accessLog logs each request's method, path (never its query, which can
// carry a code) and status.
func accessLog(next http.Handler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		logger.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start).Round(time.Microsecond))
	})
}

// statusRecorder remembers the status code written through it.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader implements http.ResponseWriter.
func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
