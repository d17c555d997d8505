package gateway

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/agnara-go/agnara/mcpimport"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// httpClient returns the HTTP client for an HTTP upstream: the gateway's
// own client credentials when configured (never a caller's token), a
// bound on every response body to a POST, and a connection pool sized for
// a gateway's concurrent calls.
//
// With x (credentials "token_exchange" or "consent"), a request made for a
// caller carries the caller's own token instead (callerCredentials), and
// only a request made for no caller the gateway's identity.
func httpClient(ctx context.Context, h *HTTPUpstream, maxBody int, lookupEnv func(string) (string, bool), x credentialSource) *http.Client {
	tr := mcpimport.HTTPClient(nil).Transport // pooled for concurrent calls
	c := gatewayClient(ctx, h, tr, maxBody, lookupEnv)
	if x == nil {
		return c
	}
	return &http.Client{Transport: &callerCredentials{x: x, caller: LimitBodies(tr, int64(maxBody)), gateway: c.Transport}}
}

// gatewayClient is httpClient for requests carrying the gateway's own
// identity.
func gatewayClient(ctx context.Context, h *HTTPUpstream, tr http.RoundTripper, maxBody int, lookupEnv func(string) (string, bool)) *http.Client {
	base := &http.Client{Transport: LimitBodies(tr, int64(maxBody))}
	if h.OAuth == nil {
		return base
	}
	secret, _ := lookupEnv(h.OAuth.ClientSecretEnv)
	cc := &clientcredentials.Config{
		ClientID:       h.OAuth.ClientID,
		ClientSecret:   secret,
		TokenURL:       h.OAuth.TokenURL,
		Scopes:         h.OAuth.Scopes,
		EndpointParams: url.Values{"resource": {cmp.Or(h.OAuth.Resource, h.URL)}},
	}
	tokens := &http.Client{Transport: LimitBodies(tr, 1<<20), Timeout: 30 * time.Second}
	return cc.Client(context.WithValue(ctx, oauth2.HTTPClient, tokens))
}

// LimitBodies returns a RoundTripper that bounds each response body to a
// POST at max bytes: reading past it fails with [ErrBodyTooLarge].
// mcpimport's limits apply to decoded values; an HTTP upstream's transport
// must bound the bytes. Event streams opened with GET are long-lived and
// not bounded.
func LimitBodies(base http.RoundTripper, max int64) http.RoundTripper {
	return limitedBodies{base, max}
}

type limitedBodies struct {
	base http.RoundTripper
	max  int64
}

func (l limitedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost {
		return res, err
	}
	res.Body = &limitedBody{ReadCloser: res.Body, left: l.max}
	return res, nil
}

// ErrBodyTooLarge is the error of reading a response body past the bound
// of [LimitBodies].
var ErrBodyTooLarge = errors.New("upstream response body too large")

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the bound: only the end of the body may follow.
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, ErrBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
