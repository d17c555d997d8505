// Package redisconn connects the Redis stores of agnara (request-state
// replay, tasks, the shared rate limiter) the same way: one URL syntax for
// a single Redis, a Sentinel deployment and a Redis Cluster (go-redis's
// ParseURL, ParseFailoverURL and ParseClusterURL forms), a PING before
// anything is trusted, and error messages that never show a password.
//
// The URL's form picks the deployment (ADR 55):
//
//	redis://[[user]:password@]host:port/db                        one Redis
//	redis://[[user]:password@]sentinel:port/db?master_name=NAME&addr=sentinel2:port&addr=sentinel3:port
//	                                                              Sentinel
//	redis://[[user]:password@]node:port?addr=node2:port&addr=node3:port
//	                                                              Cluster
//
// A master_name parameter makes it Sentinel: the host and every addr are
// sentinels, the URL's user and password are the sentinels' (the data
// nodes' are the username and password parameters), and the client follows
// the master the sentinels name. Otherwise an addr parameter makes it a
// Cluster: the host and every addr are seed nodes (name one seed twice,
// ?addr= repeating the host, for a cluster reached through one address).
// rediss:// instead of redis:// is TLS in each form.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind is the Redis deployment a URL names.
type Kind int

// The deployments a URL can name.
const (
	Single   Kind = iota // one Redis (redis.ParseURL)
	Sentinel             // a master found through sentinels (redis.ParseFailoverURL)
	Cluster              // a Redis Cluster (redis.ParseClusterURL)
)

func (k Kind) String() string {
	switch k {
	case Sentinel:
		return "Sentinel"
	case Cluster:
		return "Cluster"
	default:
		return "single"
	}
}

// KindOf returns the deployment rawURL names: Sentinel when it has a
// master_name parameter, Cluster when it has an addr parameter, Single
// otherwise (including a URL that does not parse, which Dial then refuses).
func KindOf(rawURL string) Kind {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Single
	}
	q := u.Query()
	switch {
	case q.Has("master_name"):
		return Sentinel
	case q.Has("addr"):
		return Cluster
	default:
		return Single
	}
}

// NewClient parses rawURL in the form its [Kind] calls for and returns a
// client for it, without contacting Redis. The client applies the
// deadlines of the contexts it is given to its reads and writes, so that a
// store's own per-operation timeout bounds a connection gone silent (a
// partition) rather than the client's read timeout. Errors never contain a
// password.
func NewClient(pkg, rawURL string) (redis.UniversalClient, Kind, error) {
	kind := KindOf(rawURL)
	bad := func(err error) error {
		if _, perr := url.Parse(rawURL); perr != nil {
			// The parser's words quote pieces of the URL (an "invalid
			// port" may be the start of a password): name the fix instead.
			err = errors.New("not a URL; percent-encode any '/', '?', '#' or '@' in the user name or password")
		}
		return fmt.Errorf("%s: Redis URL %q (%s): %v", pkg, RedactURL(rawURL), kind, RedactErr(err, rawURL))
	}
	// Without ContextTimeoutEnabled go-redis ignores a context's deadline
	// on the wire and waits ReadTimeout (3 s by default) for a Redis that
	// does not answer, so the stores' own Timeout would not bound anything.
	switch kind {
	case Sentinel:
		o, err := redis.ParseFailoverURL(rawURL)
		if err != nil {
			return nil, kind, bad(err)
		}
		if o.MasterName == "" {
			return nil, kind, bad(fmt.Errorf("empty master_name"))
		}
		o.ContextTimeoutEnabled = true
		return redis.NewFailoverClient(o), kind, nil
	case Cluster:
		o, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, kind, bad(err)
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClusterClient(o), kind, nil
	default:
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, kind, bad(err)
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClient(o), kind, nil
	}
}

// Dial connects to the Redis deployment at rawURL (see the package
// documentation for the three forms) and checks that it answers a PING
// within wait: on Sentinel, that a sentinel names a master and the master
// answers; on a Cluster, that a node answers. pkg names the caller in error
// messages, which never contain a password. The caller closes the client.
func Dial(ctx context.Context, pkg, rawURL string, wait time.Duration) (redis.UniversalClient, error) {
	client, kind, err := NewClient(pkg, rawURL)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("%s: Redis (%s) at %s does not answer: %v", pkg, kind, RedactURL(rawURL), RedactErr(err, rawURL))
	}
	return client, nil
}

// Open is a store's Open: it dials rawURL as [Dial] does, waiting at least
// 2 s or timeout (the store's own), builds the store on the client with
// build, and returns it with the function that closes the client. It
// closes the client itself when build fails.
func Open[T any](ctx context.Context, pkg, rawURL string, timeout time.Duration, build func(redis.UniversalClient) (T, error)) (T, func() error, error) {
	var zero T
	client, err := Dial(ctx, pkg, rawURL, max(2*time.Second, timeout))
	if err != nil {
		return zero, nil, err
	}
	v, err := build(client)
	if err != nil {
		client.Close()
		return zero, nil, err
	}
	return v, client.Close, nil
}

// RedactURL returns rawURL with its passwords, if any, replaced: the
// userinfo's and a password or sentinel_password parameter's.
func RedactURL(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "(malformed URL)"
	}
	if user, _, hasPass, host := splitUserinfo(rest); hasPass {
		rest = user + ":xxxxx@" + host
	}
	if path, query, ok := strings.Cut(rest, "?"); ok {
		params := strings.Split(query, "&")
		for i, p := range params {
			if name, _, ok := strings.Cut(p, "="); ok && isPasswordParam(name) {
				params[i] = name + "=xxxxx"
			}
		}
		rest = path + "?" + strings.Join(params, "&")
	}
	return scheme + "://" + rest
}

// splitUserinfo reads rest, a URL after its "scheme://", as
// user:pass@host... when it can be: when the text before its first "@"
// has a ":" and no "/" or "?" before that ":". A password holding "/" or
// "?" unencoded (which no URL parser reads as one) is still found; a
// query that holds "@" after a host and port is taken for userinfo too,
// and its text hidden: hiding too much is the safe way to be wrong.
func splitUserinfo(rest string) (user, pass string, ok bool, host string) {
	userinfo, host, found := strings.Cut(rest, "@")
	if !found {
		return "", "", false, ""
	}
	user, pass, ok = strings.Cut(userinfo, ":")
	if !ok || strings.ContainsAny(user, "/?") {
		return "", "", false, ""
	}
	return user, pass, true, host
}

func isPasswordParam(name string) bool {
	return name == "password" || name == "sentinel_password"
}

// RedactErr returns err's text with rawURL's passwords, if any, removed.
func RedactErr(err error, rawURL string) string {
	msg := err.Error()
	for _, pass := range passwords(rawURL) {
		msg = strings.ReplaceAll(msg, pass, "xxxxx")
	}
	return msg
}

// passwords returns the non-empty passwords rawURL carries, raw and
// unescaped.
func passwords(rawURL string) []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		out = append(out, p)
		if u, err := url.QueryUnescape(p); err == nil && u != p && u != "" {
			out = append(out, u)
		}
	}
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil
	}
	if _, pass, hasPass, _ := splitUserinfo(rest); hasPass {
		add(pass)
	}
	if _, query, ok := strings.Cut(rest, "?"); ok {
		for p := range strings.SplitSeq(query, "&") {
			if name, value, ok := strings.Cut(p, "="); ok && isPasswordParam(name) {
				add(value)
			}
		}
	}
	return out
}
