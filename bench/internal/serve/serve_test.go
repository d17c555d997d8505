package serve

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "localhost:0"} {
		if err := Run(addr, http.NotFoundHandler(), io.Discard, nil); err == nil {
			t.Errorf("Run(%q) served", addr)
		}
	}
}

func TestPrintsURLAndExitsOnStdinEOF(t *testing.T) {
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run("127.0.0.1:0", http.NotFoundHandler(), outW, inR) }()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, Path) {
		t.Fatalf("URL %q", url)
	}
	if resp, err := http.Get(url); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still serving after stdin closed")
	}
}
