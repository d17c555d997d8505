package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/internal/health"
	"github.com/agnara-go/agnara/internal/hostcheck"
	"github.com/agnara-go/agnara/prommcp"
)

// serve runs the approval inbox (package approval/inbox) until SIGINT or
// SIGTERM. It prints the inbox's URL on its first line of output.
func (c *cli) serve(name string, args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	sf := newStoreFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8095", "`host:port` to serve the inbox on")
	dev := fs.String("dev-approver", "", "local trial: every visitor acts as this approver `id`, without signing in (loopback -addr only)")
	issuer := fs.String("issuer", "", "OpenID Connect `issuer` approvers sign in with (the MCP server's)")
	clientID := fs.String("client-id", "", "the inbox's client `id` at the issuer")
	secretEnv := fs.String("client-secret-env", "AGNARA_INBOX_CLIENT_SECRET", "environment `variable` holding the inbox's client secret")
	redirect := fs.String("redirect-url", "", "the inbox's registered callback `URL` (default http://ADDR/callback)")
	idClaim := fs.String("id-claim", "sub", "ID token `claim` naming the approver")
	scopeClaim := fs.String("scope-claim", "scope", "ID token `claim` holding the approver's scopes (a space-separated string or an array)")
	metricsAddr := health.MetricsFlag{Default: health.InboxMetricsAddr}
	fs.Var(&metricsAddr, "metrics-addr", "serve Prometheus metrics of the approvals at http://`ADDR`/metrics on a listener of their own (default "+health.InboxMetricsAddr+`; "off" serves none)`)
	if _, err := c.parse(fs, "serve "+where+" [-addr HOST:PORT] (-dev-approver ID | -issuer URL -client-id ID)", args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("-addr %q: want host:port, such as 127.0.0.1:8095", *addr)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || ip != nil && ip.IsLoopback()
	opts := inbox.Options{DevApprover: *dev}
	switch {
	case *dev != "" && *issuer != "":
		return errors.New("-dev-approver and -issuer: give one of them")
	case *dev != "" && !loopback:
		return fmt.Errorf("-dev-approver lets anyone who reaches the inbox decide: listen on a loopback address, not %s", *addr)
	case *dev == "" && *issuer == "":
		return errors.New("say who may decide: -issuer and -client-id (approvers sign in), or -dev-approver ID (local trial, loopback only)")
	case *issuer != "":
		if *clientID == "" {
			return errors.New("-issuer needs -client-id, the inbox's client registration")
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if *issuer != "" {
		cb := *redirect
		if cb == "" {
			cb = "http://" + ln.Addr().String() + "/callback"
		}
		u, err := url.Parse(cb)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback)) {
			return fmt.Errorf("-redirect-url %q: want the inbox's https callback URL (http only on a loopback address)", cb)
		}
		opts.SecureCookies = u.Scheme == "https"
		opts.OIDC = &inbox.OIDC{Issuer: *issuer, ClientID: *clientID, ClientSecret: os.Getenv(*secretEnv), RedirectURL: cb,
			IDClaim: *idClaim, ScopeClaim: *scopeClaim}
	}
	s, err := sf.open(c)
	if err != nil {
		return err
	}
	defer s.Close()
	opts.Logger = slog.New(slog.NewTextHandler(c.stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m, err := prommcp.New(nil)
	if err != nil {
		return err
	}
	counted, ok := m.Approvals(s).(inbox.Store) // as s is: package approval's stores keep what an inbox needs
	if !ok {
		return errors.New("the approval store keeps no audit trail or sign-ins: the inbox cannot use it")
	}
	h, err := inbox.New(startCtx, counted, opts)
	if err != nil {
		return err
	}
	if _, err := health.ServeMetrics(ctx, &metricsAddr, m.HTTPHandler(), opts.Logger); err != nil {
		return err
	}
	srv := &http.Server{Handler: withHealth(h, sf.name(), s, opts.Logger), BaseContext: func(net.Listener) context.Context { return ctx }, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn)}
	fmt.Fprintf(c.stdout, "http://%s/\n", ln.Addr())
	mode, answers := "sign-in with "+*issuer, "loopback names"
	if *dev != "" {
		mode = "DEVELOPMENT: every visitor acts as " + *dev
	} else if u, err := url.Parse(opts.OIDC.RedirectURL); err == nil {
		answers = u.Host // the inbox answers no other Host: a proxy in front must pass it on
	}
	opts.Logger.Info("serving the approval inbox", slog.String("url", "http://"+ln.Addr().String()+"/"), slog.String("approvers", mode),
		slog.String("answers_host", answers))
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.SetKeepAlivesEnabled(false)
		stopped <- errors.Join(srv.Shutdown(shutdown), srv.Close()) // Close ends open event streams
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if err := <-stopped; err != nil && !strings.Contains(err.Error(), "context deadline") {
		return err
	}
	return nil
}

// withHealth serves /healthz and /readyz (the approval database answers)
// beside the inbox, answering only loopback names on a loopback listener
// as the MCP servers' do; every other path is the inbox's.
func withHealth(inbox http.Handler, database string, s approval.Store, logger *slog.Logger) http.Handler {
	live := hostcheck.OnLoopbackListener(health.Live(), nil)
	ready := hostcheck.OnLoopbackListener(health.Ready(func() []health.Check {
		return []health.Check{{Name: database, Probe: func(ctx context.Context) error {
			_, err := s.List(ctx, approval.Filter{Limit: 1})
			return err
		}}}
	}, logger), nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/healthz":
			live.ServeHTTP(w, r)
		case r.Method == http.MethodGet && r.URL.Path == "/readyz":
			ready.ServeHTTP(w, r)
		default:
			inbox.ServeHTTP(w, r)
		}
	})
}
