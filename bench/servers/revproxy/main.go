// Command revproxy passes every request to an upstream MCP server with
// net/http/httputil's ReverseProxy and nothing else: no MCP, no checks, the
// upstream's answer streamed back as it comes. It is the floor a gateway is
// measured against (issue 40: the gateway's own CPU per call at most 1.1×
// this proxy's). The upstream connection pool is mcpimport.HTTPClient's, as
// the gateway's is, and -gogc, -memlimit-mib and -gomaxprocs set the same
// runtime policy as the gateway's flags, so that the two differ by their
// code only.
//
//	go run ./servers/revproxy -upstream http://127.0.0.1:PORT/mcp
package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/bench/load"
	"github.com/agnara-go/agnara/mcpimport"
)

var (
	upstream = flag.String("upstream", "", "MCP endpoint of the upstream, on a loopback address")
	policy   = serve.PolicyFlags()
)

// proxy returns the reverse proxy to the upstream endpoint raw: every
// request to the proxy's MCP endpoint goes to it, headers and body as
// they came, and its answer is flushed to the client as it is written.
func proxy(raw string) (http.Handler, error) {
	if err := load.CheckLoopback(raw); err != nil {
		return nil, fmt.Errorf("-upstream: %w", err)
	}
	target, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("-upstream: %w", err)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path, r.Out.URL.RawPath = target.Scheme, target.Host, target.Path, ""
			r.Out.Host = target.Host
		},
		Transport:     mcpimport.HTTPClient(nil).Transport,
		FlushInterval: -1,
	}, nil
}

func main() {
	serve.Main(func() (http.Handler, error) {
		policy.Apply()
		return proxy(*upstream)
	})
}
