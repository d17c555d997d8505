// Package inbox is the approval inbox: a small web application in which
// approvers see the writes agents asked for, with their exact arguments,
// and approve or reject them, or record what an unknown effect turned out
// to be. It is served by `agnara approvals serve`.
//
// Pages are rendered on the server with html/template from templates and
// assets embedded in the binary; they make no external requests and work
// without JavaScript (a small script, when it runs, reloads the inbox when
// the store changes; without it the page refreshes itself).
//
// Approvers sign in with OpenID Connect (the authorization code flow with
// PKCE) against the issuer of the MCP server, and must hold the approver
// scope; the store's rules apply unchanged (no self-approval, ADR 0066).
// For local trial, [Options.DevApprover] makes every visitor act as one
// approver, and every page says so.
//
// The inbox answers only its own name (the Host header): the loopback
// names in development, the host and port of [OIDC.RedirectURL] otherwise;
// any other Host, such as a name rebound to the inbox's address, gets 421
// before anything else is done.
//
// Sign-ins are kept in the approval store, under a digest of the cookie's
// secret, so that several instances on one store need no affinity: a
// sign-in on one is honoured by all and a sign-out on one ends it on all
// (ADR 0052).
//
// An approval's page puts the decision first, so that Approve, Reject and
// Cancel are on screen without scrolling however long the arguments; its
// history reads as sentences. The list shows 200 approvals a page, each
// with its arguments at a glance: what sets its call apart from the other
// calls of its tool on the page.
//
// Every state change is a POST that must carry the session's token and
// pass the standard library's cross-origin protection; cookies are
// HttpOnly and SameSite=Lax (Secure with [Options.SecureCookies]), and
// every page is sent with a strict Content-Security-Policy.
package inbox

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/hostcheck"
)

// Store is what the inbox reads and decides: an approval store, its audit
// trail, and the inbox's sign-ins (kept beside the approvals, so that
// every inbox on the same store honours them: ADR 0052). The SQLite and
// PostgreSQL stores of package approval are both one.
type Store interface {
	approval.Store
	Events(ctx context.Context, id string) ([]approval.Event, error)
	SaveSignIn(ctx context.Context, key string, in approval.SignIn) error
	LoadSignIn(ctx context.Context, key string) (approval.SignIn, error)
	EndSignIn(ctx context.Context, key string) error
}

// Options configures [New]. Exactly one of DevApprover and OIDC is set.
type Options struct {
	// DevApprover makes every visitor act as this approver, holding the
	// approver scope, with no sign-in: for local trial only (serve it on a
	// loopback address). Every page says so, and the inbox then answers
	// only requests for a loopback name (localhost, 127.0.0.1, [::1]).
	DevApprover string
	// OIDC signs approvers in with the authorization code flow and PKCE.
	OIDC *OIDC
	// ApproverScope is the scope an approver must hold. Default
	// approval.DefaultApproverScope; it must be the store's.
	ApproverScope string
	// SecureCookies marks the cookies Secure. Set it whenever the inbox is
	// served over HTTPS (anywhere but loopback).
	SecureCookies bool
	// SessionTTL is how long a sign-in lasts. Default 8 h.
	SessionTTL time.Duration
	// Poll is how often the inbox looks for changes to push to open pages.
	// Default 2 s.
	Poll time.Duration
	// Logger receives the decisions made and refused (ids and codes, never
	// arguments or notes). Default: discards everything.
	Logger *slog.Logger
	// Now is the clock of ages and expiries. Default time.Now.
	Now func() time.Time
}

// Inbox is the web application, an http.Handler.
type Inbox struct {
	store  Store
	opts   Options
	oidc   *relyingParty // nil in development mode
	hosts  hostcheck.Hosts
	pages  *template.Template
	static http.Handler

	mu      sync.Mutex
	streams int // open event streams
	mux     *http.ServeMux
	handler http.Handler
}

// maxStreams bounds the event streams visitors can make the inbox hold
// (sign-ins are bounded by the store: approval.MaxSignIns).
const maxStreams = 256

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// New returns the inbox over store. With OIDC it discovers the issuer
// (bounded by ctx).
func New(ctx context.Context, store Store, opts Options) (*Inbox, error) {
	switch {
	case store == nil:
		return nil, errors.New("inbox: a store is required")
	case opts.DevApprover != "" && opts.OIDC != nil:
		return nil, errors.New("inbox: set DevApprover or OIDC, not both")
	case opts.DevApprover == "" && opts.OIDC == nil:
		return nil, errors.New("inbox: say who may decide: OIDC (approvers sign in) or DevApprover (local trial)")
	}
	if opts.DevApprover != "" {
		if err := approval.CheckIdentity(opts.DevApprover, ""); err != nil {
			return nil, fmt.Errorf("inbox: DevApprover: %w", err)
		}
	}
	opts.ApproverScope = cmp.Or(opts.ApproverScope, approval.DefaultApproverScope)
	opts.SessionTTL = cmp.Or(opts.SessionTTL, 8*time.Hour)
	opts.Poll = cmp.Or(opts.Poll, 2*time.Second)
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	if opts.Now == nil {
		opts.Now = time.Now
	}
	pages, err := template.New("").Funcs(funcs).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	static, _ := fs.Sub(staticFiles, "static")
	in := &Inbox{store: store, opts: opts, pages: pages, static: http.FileServerFS(static),
		hosts: hostcheck.Loopback()}
	if opts.OIDC != nil {
		// The callback URL is the inbox's public name: the one Host it
		// answers (ADR 30).
		if in.hosts, err = hostcheck.Of(opts.OIDC.RedirectURL); err != nil {
			return nil, fmt.Errorf("inbox: OIDC.RedirectURL %q: want the inbox's absolute http(s) callback URL", opts.OIDC.RedirectURL)
		}
		if in.oidc, err = newRelyingParty(ctx, *opts.OIDC, opts.ApproverScope); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", in.list)
	mux.HandleFunc("GET /approvals/{id}", in.show)
	mux.HandleFunc("POST /approvals/{id}/decide", in.decide)
	mux.HandleFunc("POST /approvals/{id}/reconcile", in.reconcile)
	mux.HandleFunc("GET /events", in.events)
	mux.HandleFunc("GET /connections", in.connections)
	mux.HandleFunc("POST /connections/revoke", in.revokeConnection)
	mux.Handle("GET /static/", http.StripPrefix("/static/", in.static))
	mux.HandleFunc("GET /login", in.login)
	mux.HandleFunc("GET /callback", in.callback)
	mux.HandleFunc("POST /logout", in.logout)
	mux.HandleFunc("GET /signed-out", func(w http.ResponseWriter, _ *http.Request) {
		in.render(w, http.StatusOK, "signedout.html", in.base(nil, "Signed out"))
	})
	in.mux = mux
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.fail(w, r, nil, http.StatusForbidden, "This request came from another site, and was refused.")
	}))
	in.handler = cop.Handler(mux)
	return in, nil
}

// ServeHTTP serves the inbox, with its security headers on every answer.
// Before anything else it refuses, with 421, a request whose Host is not
// the inbox's own name: the loopback names in development mode, the
// OIDC.RedirectURL's host and port otherwise. A page whose name was made
// to resolve to the inbox's address (DNS rebinding) thus gets no session,
// no page and no decision.
func (in *Inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !in.hosts.Allows(r.Host) {
		in.opts.Logger.Warn("inbox: a request for another host name was refused", slog.String("host", r.Host), slog.String("answers", in.hosts.String()))
		hostcheck.Refuse(w)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // with no-referrer, browsers send "Origin: null" on the pages' own POSTs
	h.Set("Cache-Control", "no-store")
	in.handler.ServeHTTP(w, r)
}

// page is what every template gets.
type page struct {
	Title       string
	Approver    string
	Dev         bool
	CSRF        string
	Flash, Err  string
	Now         time.Time
	Pending     []row
	Recent      []row
	Older       string // the cursor of the next page, or ""
	Paged       bool   // a page after the first
	Approval    *approval.Approval
	Arguments   string
	Events      []event
	CanDecide   bool
	CanCancel   bool
	CanRecord   bool
	OIDC        bool
	Live        bool
	RequesterIs bool
	Connections []approval.Connection
}

// event is an audit entry as shown: a sentence first, the raw record
// beside it.
type event struct {
	approval.Event
	Sentence, Quote string
	Detail          string
}

func (in *Inbox) base(s *session, title string) page {
	p := page{Title: title, Dev: in.opts.DevApprover != "", Now: in.opts.Now(), OIDC: in.oidc != nil}
	if s != nil {
		p.Approver, p.CSRF = s.approver.ID(), s.csrf
	}
	return p
}

func (in *Inbox) render(w http.ResponseWriter, status int, name string, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := in.pages.ExecuteTemplate(w, name, p); err != nil {
		in.opts.Logger.Error("inbox: rendering a page", slog.String("page", name), slog.String("error", err.Error()))
	}
}

// fail renders an error page. msg is shown to the visitor: never an
// internal error's text.
func (in *Inbox) fail(w http.ResponseWriter, _ *http.Request, s *session, status int, msg string) {
	p := in.base(s, http.StatusText(status))
	p.Err = msg
	in.render(w, status, "error.html", p)
}

// pageSize is how many approvals a page of the inbox lists.
const pageSize = 200

// previewRunes bounds a row's preview of its arguments.
const previewRunes = 90

// list is the inbox: a page of the approvals, newest first, the pending
// ones above the others. ?before=ID reads the page after the one that
// ended with ID (a keyset on the store's order, so that approvals arriving
// meanwhile shift nothing).
func (in *Inbox) list(w http.ResponseWriter, r *http.Request) {
	s := in.approver(w, r)
	if s == nil {
		return
	}
	before := r.URL.Query().Get("before")
	all, err := in.store.List(r.Context(), approval.Filter{Limit: pageSize + 1, Before: before})
	if errors.Is(err, approval.ErrNotFound) || errors.Is(err, approval.ErrInvalid) {
		in.fail(w, r, s, http.StatusNotFound, "There is no approval to list from: go back to the newest.")
		return
	}
	if err != nil {
		in.unavailable(w, r, s, err)
		return
	}
	p := in.base(s, "Approvals")
	p.Live, p.Paged = before == "", before != ""
	if len(all) > pageSize {
		all = all[:pageSize]
		p.Older = all[pageSize-1].ID
	}
	var pending, recent []approval.Approval
	for _, a := range all {
		if a.State == approval.StatePending {
			pending = append(pending, a)
		} else {
			recent = append(recent, a)
		}
	}
	p.Pending, p.Recent = rows(pending, previewRunes), rows(recent, previewRunes)
	in.render(w, http.StatusOK, "list.html", p)
}

// show is one approval's page.
func (in *Inbox) show(w http.ResponseWriter, r *http.Request) {
	s := in.approver(w, r)
	if s == nil {
		return
	}
	in.showWith(w, r, s, http.StatusOK, flashFor(r.URL.Query().Get("done")), "")
}

func flashFor(done string) string {
	switch done {
	case "approved":
		return "Approved. Nothing has run yet: it runs, once, when the requester's agent makes the same call again before the deadline below. Tell them if they are not waiting for it."
	case "rejected":
		return "Rejected. It will not run; the requester's agent is told so when it calls again."
	case "canceled":
		return "Canceled. It will not run; if the agent asks again, a new approval is requested."
	case "recorded":
		return "Recorded. The receipt is unchanged; your finding is kept beside it."
	case "revoked":
		return "Revoked. The gateway no longer acts for you there; its next call for you asks you to sign in again."
	}
	return ""
}

func (in *Inbox) showWith(w http.ResponseWriter, r *http.Request, s *session, status int, flash, errMsg string) {
	id := r.PathValue("id")
	a, err := in.store.Get(r.Context(), id)
	if errors.Is(err, approval.ErrNotFound) || errors.Is(err, approval.ErrInvalid) {
		in.fail(w, r, s, http.StatusNotFound, "There is no approval with this id.")
		return
	}
	if err != nil {
		in.unavailable(w, r, s, err)
		return
	}
	evs, err := in.store.Events(r.Context(), id)
	if err != nil {
		in.unavailable(w, r, s, err)
		return
	}
	p := in.base(s, a.Intent.Summary)
	p.Approval, p.Arguments, p.Flash, p.Err = &a, pretty(a.Intent.Arguments), flash, errMsg
	for _, e := range evs {
		text, quote := sentence(e, a.Intent.PrincipalID)
		p.Events = append(p.Events, event{Event: e, Sentence: text, Quote: quote, Detail: compact(e.Detail)})
	}
	live := p.Now.Before(a.ExpiresAt)
	p.CanDecide = a.State == approval.StatePending && live
	p.CanCancel = (a.State == approval.StatePending || a.State == approval.StateApproved) && live
	p.CanRecord = unknownEffect(a)
	p.RequesterIs = approval.SamePerson(a.Intent.PrincipalID, s.approver.ID())
	in.render(w, status, "approval.html", p)
}

// unknownEffect reports whether a's effect is unknown and not yet
// reconciled: what an approver may record a finding for.
func unknownEffect(a approval.Approval) bool {
	if a.Reconciliation != nil {
		return false
	}
	return a.Receipt != nil && a.Receipt.Effect == approval.EffectUnknown || a.State == approval.StateClaimed
}

func (in *Inbox) unavailable(w http.ResponseWriter, r *http.Request, s *session, err error) {
	in.opts.Logger.Error("inbox: the approval store failed", slog.String("error", err.Error()))
	in.fail(w, r, s, http.StatusServiceUnavailable, "The approval store is not answering. Try again in a moment.")
}

// maxForm bounds a decision's form: a note or evidence of a few KiB.
const maxForm = 16 << 10

// post checks a state-changing request: its session and token.
func (in *Inbox) post(w http.ResponseWriter, r *http.Request) *session {
	s := in.approver(w, r)
	if s == nil {
		return nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		in.fail(w, r, s, http.StatusBadRequest, "The form could not be read (too large?).")
		return nil
	}
	if !checkToken(r, s) {
		in.opts.Logger.Warn("inbox: a POST without the page's token was refused", slog.String("path", r.URL.Path))
		in.fail(w, r, s, http.StatusForbidden, "This request did not come from an inbox page, and was refused.")
		return nil
	}
	return s
}

// decide approves, rejects or cancels (withdraws a pending or approved
// approval: the store lets any approver do it, and the requester).
func (in *Inbox) decide(w http.ResponseWriter, r *http.Request) {
	s := in.post(w, r)
	if s == nil {
		return
	}
	id, note := r.PathValue("id"), strings.TrimSpace(r.PostFormValue("note"))
	var err error
	var done string
	switch r.PostFormValue("action") {
	case "approve":
		_, err = in.store.Approve(r.Context(), id, s.approver, note)
		done = "approved"
	case "reject":
		_, err = in.store.Reject(r.Context(), id, s.approver, note)
		done = "rejected"
	case "cancel":
		_, err = in.store.Cancel(r.Context(), id, s.approver, note)
		done = "canceled"
	default:
		in.fail(w, r, s, http.StatusBadRequest, "Choose approve, reject or cancel.")
		return
	}
	in.after(w, r, s, id, done, err)
}

// reconcile records what an unknown effect turned out to be.
func (in *Inbox) reconcile(w http.ResponseWriter, r *http.Request) {
	s := in.post(w, r)
	if s == nil {
		return
	}
	id := r.PathValue("id")
	effect := approval.EffectState(r.PostFormValue("effect"))
	if effect != approval.EffectCommitted && effect != approval.EffectNotStarted {
		in.showWith(w, r, s, http.StatusBadRequest, "", "Choose what the effect turned out to be: committed or not started.")
		return
	}
	_, err := in.store.Reconcile(r.Context(), id, s.approver, effect, strings.TrimSpace(r.PostFormValue("evidence")))
	in.after(w, r, s, id, "recorded", err)
}

// after answers a decision: back to the approval's page (303) on success,
// or that page again with what went wrong.
func (in *Inbox) after(w http.ResponseWriter, r *http.Request, s *session, id, done string, err error) {
	log := in.opts.Logger.With(slog.String("approval_id", id), slog.String("approver", s.approver.ID()), slog.String("decision", done))
	if err == nil {
		log.Info("inbox: decided")
		http.Redirect(w, r, "/approvals/"+id+"?done="+done, http.StatusSeeOther)
		return
	}
	status, msg := http.StatusConflict, ""
	switch {
	case errors.Is(err, approval.ErrSelfApproval):
		status, msg = http.StatusForbidden, "You asked for this write: another approver must decide it."
	case errors.Is(err, approval.ErrNotAuthorized):
		status, msg = http.StatusForbidden, "You do not hold the approver scope."
	case errors.Is(err, approval.ErrNotPending):
		msg = "It was decided already (or has run): see its state below."
	case errors.Is(err, approval.ErrExpired):
		msg = "It expired before it was decided."
	case errors.Is(err, approval.ErrEvidenceRequired):
		status, msg = http.StatusBadRequest, "Say how you established the effect: the evidence is required."
	case errors.Is(err, approval.ErrNotClaimed), errors.Is(err, approval.ErrConflict):
		msg = "Its effect is not unknown (or was recorded already): there is nothing to record."
	case errors.Is(err, approval.ErrNotFound):
		in.fail(w, r, s, http.StatusNotFound, "There is no approval with this id.")
		return
	case errors.Is(err, approval.ErrInvalid):
		status, msg = http.StatusBadRequest, "The note or evidence cannot be recorded (control characters, or too long)."
	default:
		in.unavailable(w, r, s, err)
		return
	}
	log.Info("inbox: decision refused", slog.String("error", err.Error()))
	in.showWith(w, r, s, status, "", msg)
}

// events streams "changed" whenever the store's approvals change, so that
// an open inbox reloads itself (server-sent events).
func (in *Inbox) events(w http.ResponseWriter, r *http.Request) {
	if s := in.approver(w, r); s == nil {
		return
	}
	in.mu.Lock()
	if in.streams >= maxStreams {
		in.mu.Unlock()
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many open inbox pages", http.StatusServiceUnavailable)
		return
	}
	in.streams++
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		in.streams--
		in.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	last, started, beat := "", false, time.Time{}
	tick := time.NewTicker(in.opts.Poll)
	defer tick.Stop()
	for {
		if fp, err := in.fingerprint(r.Context()); err == nil {
			wrote := true
			switch now := time.Now(); {
			case started && fp != last:
				fmt.Fprint(w, "event: changed\ndata: {}\n\n")
			case now.Sub(beat) >= 15*time.Second: // keeps proxies from closing it
				fmt.Fprint(w, ": beat\n\n")
				beat = now
			default:
				wrote = false
			}
			last, started = fp, true
			if wrote && rc.Flush() != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// fingerprint names the store's newest approvals and their states.
func (in *Inbox) fingerprint(ctx context.Context) (string, error) {
	all, err := in.store.List(ctx, approval.Filter{Limit: 200})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, a := range all {
		b.WriteString(a.ID + "=" + string(a.State) + ";")
		if a.Reconciliation != nil {
			b.WriteString("r;")
		}
	}
	return b.String(), nil
}

// pretty indents JSON arguments for reading; the template escapes them.
func pretty(raw json.RawMessage) string {
	out, err := indent(raw)
	if err != nil {
		return string(raw)
	}
	return out
}
