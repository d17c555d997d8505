package mcpimport_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpimport"
)

func TestHTTPClient(t *testing.T) {
	base := &http.Transport{MaxIdleConns: 10, IdleConnTimeout: time.Minute}
	c := mcpimport.HTTPClient(&mcpimport.HTTPOptions{MaxIdleConnsPerHost: 32, Transport: base})
	tr, ok := c.Transport.(*http.Transport)
	switch {
	case !ok:
		t.Fatalf("transport %T", c.Transport)
	case tr == base:
		t.Fatal("the base transport was not cloned")
	case base.MaxIdleConnsPerHost != 0:
		t.Fatal("the base transport was changed")
	case tr.MaxIdleConnsPerHost != 32 || tr.MaxIdleConns != 32 || tr.IdleConnTimeout != time.Minute:
		t.Fatalf("transport: per host %d, all %d, idle timeout %s", tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tr.IdleConnTimeout)
	case c.Timeout != 0:
		t.Fatalf("an overall timeout (%s) would end the session's streams", c.Timeout)
	}
	def := mcpimport.HTTPClient(nil).Transport.(*http.Transport)
	if def == http.DefaultTransport || def.MaxIdleConnsPerHost != 64 || def.Proxy == nil {
		t.Fatalf("default transport: per host %d, proxy set %v", def.MaxIdleConnsPerHost, def.Proxy != nil)
	}
}
