package httpserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/httpserver"
)

func TestNew(t *testing.T) {
	defaults := [4]time.Duration{httpserver.DefaultReadHeaderTimeout, httpserver.DefaultReadTimeout, httpserver.DefaultWriteTimeout, httpserver.DefaultIdleTimeout}
	for _, tc := range []struct {
		name string
		in   httpserver.Timeouts
		want [4]time.Duration // read header, read, write, idle
	}{
		{"zero is every default", httpserver.Timeouts{}, defaults},
		{"set", httpserver.Timeouts{ReadHeader: time.Second, Read: 2 * time.Second, Write: time.Hour, Idle: 3 * time.Second}, [4]time.Duration{time.Second, 2 * time.Second, time.Hour, 3 * time.Second}},
		{"negative is off", httpserver.Timeouts{ReadHeader: -1, Idle: -time.Second}, [4]time.Duration{0, httpserver.DefaultReadTimeout, httpserver.DefaultWriteTimeout, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.NotFoundHandler()
			srv := httpserver.New(h, tc.in)
			got := [4]time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout}
			if got != tc.want {
				t.Errorf("timeouts %v, want %v", got, tc.want)
			}
			if srv.MaxHeaderBytes != 64<<10 {
				t.Errorf("MaxHeaderBytes %d, want 64 KiB", srv.MaxHeaderBytes)
			}
			if srv.Handler == nil {
				t.Error("the server has no handler")
			}
		})
	}
}
