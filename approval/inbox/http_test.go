package inbox_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/internal/proctest"
)

// httpUser is a browser stand-in over plain HTTP: it keeps the cookies it is
// given by name (one site: whatever their Path or Secure), sends them on
// every request with Host set to host (the URL's when ""), and does not
// follow redirects, so that every answer can be looked at.
type httpUser struct {
	t       *testing.T
	host    string
	cookies map[string]*http.Cookie
}

func newUser(t *testing.T, host string) *httpUser {
	return &httpUser{t: t, host: host, cookies: map[string]*http.Cookie{}}
}

// answer is one response, read whole.
type answer struct {
	status  int
	header  http.Header
	body    string
	cookies map[string]*http.Cookie // set by this response, by name
}

func (u *httpUser) get(rawURL string) answer { return u.do(http.MethodGet, rawURL, nil, nil) }

func (u *httpUser) post(rawURL string, form url.Values, header map[string]string) answer {
	return u.do(http.MethodPost, rawURL, form, header)
}

func (u *httpUser) do(method, rawURL string, form url.Values, header map[string]string) answer {
	u.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	// A deadline, so that a stream opened by mistake (an inbox answering
	// a request it should refuse) fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		u.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if u.host != "" {
		req.Host = u.host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	for _, c := range u.cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		u.t.Fatalf("%s %s: reading the answer (%d): %v", method, rawURL, res.StatusCode, err)
	}
	a := answer{status: res.StatusCode, header: res.Header, body: string(b), cookies: map[string]*http.Cookie{}}
	for _, c := range res.Cookies() {
		a.cookies[c.Name] = c
		if c.MaxAge < 0 {
			delete(u.cookies, c.Name)
		} else {
			u.cookies[c.Name] = c
		}
	}
	return a
}

// token is the session's token on a page the inbox rendered.
func (a answer) token(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("no token on the page (%d):\n%s", a.status, a.body)
	}
	return m[1]
}

// testClock is a settable clock for Options.Now.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// serveInbox serves an inbox over s with opts on 127.0.0.1 and returns it
// with its URL.
func serveInbox(t *testing.T, s inbox.Store, opts inbox.Options) (*inbox.Inbox, string) {
	t.Helper()
	in, err := inbox.New(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	t.Cleanup(srv.Close)
	return in, srv.URL
}

func mustPending(t *testing.T, s approval.Store, id string) {
	t.Helper()
	a, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != approval.StatePending {
		t.Fatalf("approval %s is %s (decided by %q), want pending: a refused request changed it", id, a.State, a.DecidedBy)
	}
}

const testClient, testSecret = "agnara-inbox", "inbox-secret"

// startDevIssuer builds and starts examples/devissuer with the inbox as its
// client, accepting redirectURIs besides loopback ones, and returns its
// URL.
func startDevIssuer(t *testing.T, redirectURIs ...string) string {
	t.Helper()
	args := []string{"-addr", "127.0.0.1:0", "-client-id", testClient, "-client-secret", testSecret, "-scopes", "openid " + approval.DefaultApproverScope}
	if len(redirectURIs) > 0 {
		args = append(args, "-redirect-uris", strings.Join(redirectURIs, ","))
	}
	return proctest.Start(t, proctest.Build(t, "../../examples/devissuer"), args...)
}

// serveSignInInbox serves an inbox whose approvers sign in at issuer, on
// 127.0.0.1; publicURL is its public origin (the redirect URL's), "" for
// the URL it is served on.
func serveSignInInbox(t *testing.T, s inbox.Store, issuer, publicURL string, secure bool) (*inbox.Inbox, string, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	if publicURL == "" {
		publicURL = base
	}
	in, err := inbox.New(context.Background(), s, inbox.Options{SecureCookies: secure,
		OIDC: &inbox.OIDC{Issuer: issuer, ClientID: testClient, ClientSecret: testSecret, RedirectURL: publicURL + "/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = in
	srv.Start()
	t.Cleanup(srv.Close)
	return in, base, publicURL
}

var signInRequest = regexp.MustCompile(`name="request" value="([^"]+)"`)

// walkSignIn walks u through the sign-in from the inbox's /login?next=next
// (query, already encoded) as who, holding the approver scope: the inbox's
// redirect to the issuer, the issuer's sign-in form, its redirect back to
// the callback, which is sent to base (where the inbox is served, whatever
// the callback's public host). It returns the callback's answer, and
// login's.
func walkSignIn(t *testing.T, u *httpUser, base, issuer, query, who string) (callback, login answer) {
	t.Helper()
	return walkSignInAcross(t, u, base, base, issuer, query, who)
}

// walkSignInAcross is walkSignIn starting at the inbox served at base and
// coming back, from the issuer, to the one served at back: two instances
// behind one name.
func walkSignInAcross(t *testing.T, u *httpUser, base, backTo, issuer, query, who string) (callback, login answer) {
	t.Helper()
	login = u.get(base + "/login" + query)
	authorize := login.header.Get("Location")
	if login.status != http.StatusSeeOther || !strings.HasPrefix(authorize, issuer+"/authorize?") {
		t.Fatalf("login: %d to %q\n%s", login.status, authorize, login.body)
	}
	at := newUser(t, "") // the issuer's pages, at the issuer's own host
	page := at.get(authorize)
	req := signInRequest.FindStringSubmatch(page.body)
	if req == nil {
		t.Fatalf("no sign-in form at the issuer:\n%s", page.body)
	}
	signedIn := at.post(issuer+"/authorize", url.Values{"request": {req[1]}, "user": {who}, "scopes": {approval.DefaultApproverScope}, "action": {"sign-in"}}, nil)
	back, err := url.Parse(signedIn.header.Get("Location"))
	if err != nil || back.Path != "/callback" || back.Query().Get("code") == "" {
		t.Fatalf("the issuer redirects to %q", signedIn.header.Get("Location"))
	}
	return u.get(backTo + "/callback?" + back.RawQuery), login
}
