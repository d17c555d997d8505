// Package redisconn connects the Redis stores of agnara (request-state
// replay, tasks) the same way: a URL in go-redis's format, a PING before
// anything is trusted, and error messages that never show the URL's
// password.
package redisconn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Dial connects to the Redis at url (redis://[[user]:password@]host:port/db,
// or rediss:// for TLS; the format of redis.ParseURL) and checks that it
// answers a PING within wait. pkg names the caller in error messages, which
// never contain the password. The client applies the deadlines of the
// contexts it is given to its reads and writes, so that a store's own
// per-operation timeout bounds a connection gone silent (a partition)
// rather than the client's read timeout. The caller closes the client.
func Dial(ctx context.Context, pkg, url string, wait time.Duration) (*redis.Client, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%s: Redis URL %q: %v", pkg, RedactURL(url), RedactErr(err, url))
	}
	// Without this go-redis ignores a context's deadline on the wire and
	// waits ReadTimeout (3 s by default) for a Redis that does not answer,
	// so the stores' own Timeout would not bound anything.
	o.ContextTimeoutEnabled = true
	client := redis.NewClient(o)
	pctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("%s: Redis at %s does not answer: %v", pkg, o.Addr, RedactErr(err, url))
	}
	return client, nil
}

// RedactURL returns url with its password, if any, replaced.
func RedactURL(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return "(malformed URL)"
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return url
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return url
}

// RedactErr returns err's text with url's password, if any, removed.
func RedactErr(err error, url string) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(url, "://"); ok {
		if userinfo, _, ok := strings.Cut(rest, "@"); ok {
			if _, pass, ok := strings.Cut(userinfo, ":"); ok && pass != "" {
				msg = strings.ReplaceAll(msg, pass, "xxxxx")
			}
		}
	}
	return msg
}
