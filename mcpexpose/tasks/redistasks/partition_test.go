package redistasks_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
)

// partition is a TCP proxy between one instance and its Redis that the
// test can cut: it stands for a network partition between that instance
// and the task store (the store itself, and other instances, stay well).
// Cut closes the connections it carried and holds new ones open without
// forwarding a byte (the silence of a partition, not a refusal); Heal
// closes those and forwards new connections again. It stops with the test.
type partition struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newPartition(t *testing.T, target string) *partition {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partition{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		p.closeAll()
		p.mu.Unlock()
	})
	return p
}

func (p *partition) addr() string { return p.ln.Addr().String() }

// keep tracks c, unless the partition is cut; it reports whether it did.
func (p *partition) keep(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = struct{}{}
	return !p.cut
}

func (p *partition) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.keep(c) {
			go p.forward(c)
		} // else held, silent, until Heal closes it
	}
}

func (p *partition) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.keep(up) {
		c.Close()
		up.Close()
		return
	}
	go func() {
		io.Copy(up, c)
		up.Close()
		c.Close()
	}()
	io.Copy(c, up)
	c.Close()
	up.Close()
}

func (p *partition) closeAll() {
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *partition) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.closeAll()
}

func (p *partition) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeAll()
	p.cut = false
}

// TestTaskRunnerCutOffIsCancelledBeforeItIsDeclaredFailed is
// tasktest.CutOff (ADR 0067) on two instances sharing one
// redis-server, instance A through a partition the test cuts: A cancels
// the handler before B declares the task failed, and the late result is
// never reported as completed. mcpexpose's test of the same name runs it
// on the in-memory store.
func TestTaskRunnerCutOffIsCancelledBeforeItIsDeclaredFailed(t *testing.T) {
	r := enginetest.Redis(t)
	p := newPartition(t, r.Addr())
	a, closeA, err := redistasks.Open(t.Context(), "redis://"+p.addr()+"/0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeA() })
	b, closeB, err := redistasks.Open(t.Context(), r.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeB() })
	tasktest.CutOff(t, a, b, p.Cut, p.Heal)
}

// TestRedisTaskStoreTimeoutBoundsAPartition: redistasks.Options.Timeout
// bounds an operation on a connection that has gone silent, however long
// the client's own read timeout (an hour here, from the URL): a store
// that hung for that long would hold a tasks/get, and every heartbeat of
// the running instance, for as long.
func TestRedisTaskStoreTimeoutBoundsAPartition(t *testing.T) {
	r := enginetest.Redis(t)
	p := newPartition(t, r.Addr())
	store, closeFn, err := redistasks.Open(t.Context(), "redis://"+p.addr()+"/0?read_timeout=1h&write_timeout=1h", &redistasks.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	if _, err := store.Get(t.Context(), "nothing"); err != tasks.ErrNotFound {
		t.Fatalf("Get before the partition = %v, want ErrNotFound", err)
	}
	p.Cut()
	got := make(chan error, 1)
	go func() {
		_, err := store.Get(context.Background(), "nothing")
		got <- err
	}()
	select {
	case err := <-got:
		if !errors.Is(err, tasks.ErrUnavailable) {
			t.Errorf("Get across the partition = %v, want ErrUnavailable", err)
		}
	case <-time.After(20 * time.Second):
		p.Heal() // let the Get end with the test
		t.Fatal("Get across the partition did not end within 20s: its Timeout of 50ms is not applied")
	}
}
