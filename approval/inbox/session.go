package inbox

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agnara-go/agnara/policy"
)

// session is a signed-in approver (or the development approver's visit).
type session struct {
	approver policy.Principal
	csrf     string
	expires  time.Time
}

const sessionCookie = "agnara_inbox"

// approver returns the request's session, making one for the development
// approver; nil (after redirecting to sign-in) when there is none.
func (in *Inbox) approver(w http.ResponseWriter, r *http.Request) *session {
	now := in.opts.Now()
	if c, err := r.Cookie(sessionCookie); err == nil {
		in.mu.Lock()
		s := in.sessions[c.Value]
		if s != nil && !now.Before(s.expires) {
			delete(in.sessions, c.Value)
			s = nil
		}
		in.mu.Unlock()
		if s != nil {
			return s
		}
	}
	if in.opts.DevApprover == "" {
		if r.Method == http.MethodGet {
			http.Redirect(w, r, "/login?next="+nextQuery.Replace(safeNext(r.URL.EscapedPath())), http.StatusSeeOther)
		} else {
			in.fail(w, r, nil, http.StatusForbidden, "Your sign-in has ended: sign in again, then repeat the decision.")
		}
		return nil
	}
	if r.Method != http.MethodGet {
		// A development session is made by a page view, never by a POST:
		// a POST without the page's session and token is refused.
		in.fail(w, r, nil, http.StatusForbidden, "This request did not come from an inbox page, and was refused.")
		return nil
	}
	return in.startSession(w, policy.NewPrincipal(in.opts.DevApprover, []string{in.opts.ApproverScope}))
}

// startSession records a session for approver and sets its cookie.
func (in *Inbox) startSession(w http.ResponseWriter, approver policy.Principal) *session {
	s := &session{approver: approver, csrf: randomID(), expires: in.opts.Now().Add(in.opts.SessionTTL)}
	id := randomID()
	in.mu.Lock()
	makeRoom(in.sessions, maxSessions, in.opts.Now(), func(s *session) time.Time { return s.expires })
	in.sessions[id] = s
	in.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, Secure: in.opts.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: int(in.opts.SessionTTL / time.Second)})
	return s
}

// makeRoom, when m is full, drops its expired entries, then others (in
// map order) until one more fits: what visitors make the inbox keep stays
// bounded.
func makeRoom[V any](m map[string]V, max int, now time.Time, expires func(V) time.Time) {
	if len(m) < max {
		return
	}
	for k, v := range m {
		if !now.Before(expires(v)) {
			delete(m, k)
		}
	}
	for k := range m {
		if len(m) < max {
			return
		}
		delete(m, k)
	}
}

// checkToken reports whether the POST carries the session's token.
func checkToken(r *http.Request, s *session) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

func randomID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// nextQuery escapes what a local path may hold that a query value reads
// otherwise ("/" stays as it is, for readable sign-in URLs).
var nextQuery = strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", "#", "%23", "?", "%3F")

// safeNext returns p, where sign-in returns to, when it is a path on this
// site, and "/" otherwise. A browser makes more of a Location than it
// says: it drops TAB, CR and LF anywhere and spaces and controls at either
// end, reads a backslash as "/", and takes "//name" for another site, so
// "/<TAB>/evil.example" leaves the site. Rather than list such spellings,
// p is accepted only when it is plainly a local path: printable ASCII
// without space or backslash, starting with "/", parsed by net/url as a
// relative reference with no scheme, host or user, and with a path that,
// percent-decoded, still has no control character, non-ASCII byte,
// backslash, empty segment ("//") or dot segment ("/./", "/../").
// Everything the inbox links to is such a path.
func safeNext(p string) string {
	if !localPath(p) {
		return "/"
	}
	return p
}

func localPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	// u.Path is decoded: "/%2F/x" is "//x", and "/%5C" a backslash.
	for i := 0; i < len(u.Path); i++ {
		if c := u.Path[i]; c < ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	if strings.Contains(u.Path, "//") {
		return false
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
