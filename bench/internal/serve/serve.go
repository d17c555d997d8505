// Package serve runs one benchmark server: it listens on a loopback address
// only, prints its endpoint URL as the first line of standard output, and
// serves until it is signalled or its standard input closes (so a server
// never outlives the driver that started it, even a killed one).
package serve

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

// Path is the MCP endpoint every benchmark server serves.
const Path = "/mcp"

// Main parses -addr (and -cpuprofile), builds the handler and serves it at
// Path. It does not return.
func Main(handler func() (http.Handler, error)) {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	h, err := handler()
	if err != nil {
		log.Fatal(err)
	}
	var prof *os.File
	if *cpuprofile != "" {
		if prof, err = os.Create(*cpuprofile); err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			log.Fatal(err)
		}
	}
	err = Run(*addr, h, os.Stdout, os.Stdin)
	if prof != nil {
		pprof.StopCPUProfile()
		if cerr := prof.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		log.Fatal(err)
	}
	os.Exit(0)
}

// Run listens on addr, which must be a loopback address, writes the endpoint
// URL and a newline to out, and serves h until stdin reaches EOF (when stdin
// is not nil) or the process gets SIGINT or SIGTERM.
func Run(addr string, h http.Handler, out io.Writer, stdin io.Reader) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing to listen on %q: benchmark servers bind loopback addresses only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if stdin != nil {
		ctx2, cancel := context.WithCancel(ctx)
		defer cancel()
		ctx = ctx2
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(stdin))
			cancel()
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(out, "http://%s%s\n", ln.Addr(), Path); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Benchmark clients hold long-lived connections: do not wait for them.
	_ = srv.Close()
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
