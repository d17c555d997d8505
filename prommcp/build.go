package prommcp

import (
	"runtime"
	"runtime/debug"

	"github.com/agnara-go/agnara/agnara"
	"github.com/prometheus/client_golang/prometheus"
)

// newBuildInfo returns agnara_build_info: 1, labelled with what the
// binary was built from, so that a dashboard can tell which build each
// instance runs and an alert can compare them.
func newBuildInfo() prometheus.Collector {
	bi, _ := debug.ReadBuildInfo()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help: "Always 1: the agnara-go version compiled in, the Go version and the VCS revision the binary was built from (unknown without VCS information).",
		ConstLabels: prometheus.Labels{
			"version":   agnara.Version,
			"goversion": runtime.Version(),
			"revision":  revision(bi),
		}})
	g.Set(1)
	return g
}

// revision is the VCS revision Go stamped into the binary, with "-dirty"
// when the tree had changes, or "unknown": go test binaries, go run of
// files and -buildvcs=false builds carry none.
func revision(bi *debug.BuildInfo) string {
	if bi == nil {
		return "unknown"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "unknown"
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return rev
}
