package inbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

// session is a signed-in approver (or the development approver's visit).
// Its record is in the store, under a digest of the cookie's secret, so
// that every inbox sharing the store honours it (ADR 0052); the page
// token is another digest of the same secret, kept nowhere.
type session struct {
	approver policy.Principal
	csrf     string
	expires  time.Time
	key      string // the store's key for it
}

const sessionCookie = "agnara_inbox"

// sessionOf derives the store's key and the page token from the secret a
// session cookie holds. The two digests are of different domains: the key,
// which the database holds, gives neither the secret nor the token.
func sessionOf(secret string) (key, csrf string) {
	k := sha256.Sum256([]byte("agnara inbox session\x00" + secret))
	c := sha256.Sum256([]byte("agnara inbox page token\x00" + secret))
	return hex.EncodeToString(k[:]), base64.RawURLEncoding.EncodeToString(c[:])
}

// wellFormed reports whether v could be a secret randomID made: 43
// base64url characters. Anything else is not looked up.
func wellFormed(v string) bool {
	if len(v) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil
}

// approver returns the request's session, making one for the development
// approver; nil (after redirecting to sign-in, or answering that the store
// failed) when there is none.
func (in *Inbox) approver(w http.ResponseWriter, r *http.Request) *session {
	if c, err := r.Cookie(sessionCookie); err == nil && wellFormed(c.Value) {
		s, err := in.session(r.Context(), c.Value)
		if err != nil {
			in.unavailable(w, r, nil, err)
			return nil
		}
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
	s, err := in.startSession(r.Context(), w, policy.NewPrincipal(in.opts.DevApprover, []string{in.opts.ApproverScope}))
	if err != nil {
		in.unavailable(w, r, nil, err)
		return nil
	}
	return s
}

// session reads the session whose cookie holds secret: nil when there is
// none or it has ended (then its record is removed), an error when the
// store failed.
func (in *Inbox) session(ctx context.Context, secret string) (*session, error) {
	key, csrf := sessionOf(secret)
	rec, err := in.store.LoadSignIn(ctx, key)
	if errors.Is(err, approval.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !in.opts.Now().Before(rec.Expires) {
		if err := in.store.EndSignIn(ctx, key); err != nil {
			return nil, err
		}
		return nil, nil
	}
	return &session{approver: rec.Approver, csrf: csrf, expires: rec.Expires, key: key}, nil
}

// startSession records a session for approver in the store and sets its
// cookie.
func (in *Inbox) startSession(ctx context.Context, w http.ResponseWriter, approver policy.Principal) (*session, error) {
	secret := randomID()
	key, csrf := sessionOf(secret)
	s := &session{approver: approver, csrf: csrf, expires: in.opts.Now().Add(in.opts.SessionTTL), key: key}
	if err := in.store.SaveSignIn(ctx, key, approval.SignIn{Approver: approver, Expires: s.expires}); err != nil {
		return nil, err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true, Secure: in.opts.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: int(in.opts.SessionTTL / time.Second)})
	return s, nil
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
