package serve

import (
	"flag"
	"runtime"
	"runtime/debug"
)

// Policy is the runtime policy of a server that stands in front of an
// upstream (the gateway, the reverse proxy), from its command-line flags:
// -gogc, -memlimit-mib and -gomaxprocs (docs/operating.md). The driver
// gives both the same, so that they differ by their code only.
type Policy struct {
	gogc     *int
	memlimit *int64
	procs    *int
}

// PolicyFlags defines the policy's flags on the command line; call it
// before Main parses them.
func PolicyFlags() *Policy {
	return &Policy{
		gogc:     flag.Int("gogc", 0, "garbage collection target percentage (debug.SetGCPercent; 0: the runtime's, GOGC or 100)"),
		memlimit: flag.Int64("memlimit-mib", 0, "soft memory limit in MiB (debug.SetMemoryLimit; 0: the runtime's, GOMEMLIMIT or none)"),
		procs:    flag.Int("gomaxprocs", 0, "processors running Go code at once (runtime.GOMAXPROCS; 0: the runtime's, GOMAXPROCS or the CPUs it may use)"),
	}
}

// Apply sets the runtime's policy from the parsed flags; a zero flag
// leaves the runtime's own.
func (p *Policy) Apply() {
	if *p.procs > 0 {
		runtime.GOMAXPROCS(*p.procs)
	}
	if *p.gogc != 0 {
		debug.SetGCPercent(*p.gogc)
	}
	if *p.memlimit > 0 {
		debug.SetMemoryLimit(*p.memlimit << 20)
	}
}
