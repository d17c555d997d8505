package main

import (
	"errors"
	"io"
	"net/http"

	"golang.org/x/oauth2"
)

// oauth2HTTPClient is the context key golang.org/x/oauth2 reads the HTTP
// client for token requests from.
var oauth2HTTPClient = oauth2.HTTPClient

// limitedBodies bounds each response body the upstream sends on a request
// (mcpimport's limits apply to decoded values; the transport must bound the
// bytes). Event streams opened with GET are long-lived and not bounded here.
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

var errBodyTooLarge = errors.New("upstream response body too large")

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
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
