// Package redistasks is a [tasks.Store] in Redis, so that every instance
// of a server behind a load balancer sees the same tasks: a task created
// through one is polled, answered and cancelled through any other, while
// its handler keeps running on the instance that started it (which looks
// in the store at every heartbeat; see mcpexpose.TaskOptions and ADR 0067).
//
// Each task is one string key (Options.Prefix + id) holding the JSON
// record, expiring with the task (PXAT); updates are optimistic
// transactions (WATCH/MULTI/EXEC), retried when another instance wrote
// first. Every Redis failure is reported wrapped in tasks.ErrUnavailable,
// and mcpexpose fails closed on it.
//
// A Store is also a [tasks.Changes]: changes are told on one Redis pub/sub
// channel (Options.Prefix + "changes"), carrying the telling instance and
// the task id only, so that a client listening for a task on one instance
// hears of a change made on another (ADR 0049).
package redistasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agnara-go/agnara/internal/redisconn"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/redis/go-redis/v9"
)

// defaultPrefix namespaces the keys of tasks when [Options.Prefix] is
// empty.
const defaultPrefix = "agnara:tasks:"

// maxRetries bounds the optimistic retries of one Update.
const maxRetries = 16

// Options configures a Store. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Prefix namespaces the keys. Default: "agnara:tasks:".
	Prefix string
	// Timeout bounds each operation. Default: one second.
	Timeout time.Duration
}

// Store is a tasks.Store in Redis. It is safe for concurrent use, by any
// number of instances sharing the Redis server.
type Store struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
}

var (
	_ tasks.Store   = (*Store)(nil)
	_ tasks.Changes = (*Store)(nil)
)

// New returns a store on client, which the caller keeps and closes.
func New(client redis.UniversalClient, opts *Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redistasks: New needs a Redis client")
	}
	s := &Store{client: client, prefix: defaultPrefix, timeout: time.Second}
	if opts != nil {
		if opts.Prefix != "" {
			s.prefix = opts.Prefix
		}
		switch {
		case opts.Timeout < 0:
			return nil, fmt.Errorf("redistasks: negative Timeout %v", opts.Timeout)
		case opts.Timeout > 0:
			s.timeout = opts.Timeout
		}
	}
	return s, nil
}

// Open connects to the Redis deployment at url, checks that it answers, and
// returns a store and the function that closes the connection. The URL is
// one of
//
//	redis://[[user]:password@]host:port/db        one Redis (redis.ParseURL)
//	redis://sentinel:port/db?master_name=NAME&addr=sentinel2:port&...
//	                                              Sentinel (redis.ParseFailoverURL)
//	redis://node:port?addr=node2:port&...          Cluster (redis.ParseClusterURL)
//
// or rediss:// for TLS. Every operation touches one key, so on a Cluster
// the tasks spread over the shards, and changes are told on a channel that
// a Cluster's PUBLISH carries to every node. Errors never show a password.
func Open(ctx context.Context, url string, opts *Options) (*Store, func() error, error) {
	var timeout time.Duration
	if opts != nil {
		timeout = opts.Timeout
	}
	return redisconn.Open(ctx, "redistasks", url, timeout, func(c redis.UniversalClient) (*Store, error) { return New(c, opts) })
}

func unavailable(op string, err error) error {
	return fmt.Errorf("%w: redistasks: %s: %w", tasks.ErrUnavailable, op, err)
}

// Create implements tasks.Store.
func (s *Store) Create(ctx context.Context, t *tasks.Task) error {
	if !time.Now().Before(t.ExpiresAt) {
		return errors.New("redistasks: the task has already expired")
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err = s.client.Do(ctx, "SET", s.prefix+t.ID, b, "NX", "PXAT", t.ExpiresAt.UnixMilli()).Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return tasks.ErrExists
	}
	return unavailable("SET NX", err)
}

// Get implements tasks.Store.
func (s *Store) Get(ctx context.Context, id string) (*tasks.Task, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.get(ctx, s.client, id)
}

func (s *Store) get(ctx context.Context, c redis.Cmdable, id string) (*tasks.Task, error) {
	b, err := c.Get(ctx, s.prefix+id).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, tasks.ErrNotFound
	case err != nil:
		return nil, unavailable("GET", err)
	}
	var t tasks.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, unavailable("decode", err)
	}
	return &t, nil
}

// Update implements tasks.Store.
func (s *Store) Update(ctx context.Context, id string, change func(*tasks.Task) error) (*tasks.Task, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	key := s.prefix + id
	var out *tasks.Task
	var changeErr error
	txf := func(tx *redis.Tx) error {
		t, err := s.get(ctx, tx, id)
		if err != nil {
			changeErr = err
			return err
		}
		if err := change(t); err != nil {
			changeErr = err
			return err
		}
		b, err := json.Marshal(t)
		if err != nil {
			changeErr = err
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SetArgs(ctx, key, b, redis.SetArgs{KeepTTL: true, Mode: "XX"})
			return nil
		})
		if err == nil {
			out = t
		}
		return err
	}
	for range maxRetries {
		changeErr = nil
		err := s.client.Watch(ctx, txf, key)
		switch {
		case err == nil:
			return out, nil
		case changeErr != nil:
			return nil, changeErr
		case errors.Is(err, redis.TxFailedErr):
			continue // another writer got there first
		case errors.Is(err, redis.Nil):
			return nil, tasks.ErrNotFound // expired between GET and EXEC
		default:
			return nil, unavailable("update", err)
		}
	}
	return nil, unavailable("update", errors.New("too many concurrent writers"))
}

// channel is the pub/sub channel changes are told on.
func (s *Store) channel() string { return s.prefix + "changes" }

// Changed implements tasks.Changes with one PUBLISH of "from\nid".
func (s *Store) Changed(ctx context.Context, from, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.client.Publish(ctx, s.channel(), from+"\n"+id).Err(); err != nil {
		return unavailable("PUBLISH", err)
	}
	return nil
}

// Subscribe implements tasks.Changes: it SUBSCRIBEs on a connection of its
// own and returns once Redis has confirmed it; a goroutine then calls f
// with each change until ctx ends, when it closes the connection. A
// message of another form on the channel is ignored. If the connection
// drops, the client reconnects and subscribes again by itself; what was
// told meanwhile is lost.
func (s *Store) Subscribe(ctx context.Context, f func(from, id string)) error {
	ps := s.client.Subscribe(ctx, s.channel())
	confirm, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := ps.Receive(confirm); err != nil {
		ps.Close()
		return unavailable("SUBSCRIBE", err)
	}
	ch := ps.Channel()
	go func() {
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-ch:
				if !ok {
					return
				}
				from, id, ok := strings.Cut(m.Payload, "\n")
				if ok && from != "" && id != "" {
					f(from, id)
				}
			}
		}
	}()
	return nil
}
