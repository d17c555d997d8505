// Package proc reads a process's CPU time and resident memory from Linux's
// /proc file system.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ClockTicks returns the kernel's clock ticks per second (getconf CLK_TCK),
// or 100, the value on every mainstream Linux, when getconf is missing.
func ClockTicks() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
}

// CPUTicks returns the user and system CPU time of process pid, in clock
// ticks (fields 14 and 15 of /proc/<pid>/stat).
func CPUTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseStat(b)
}

// ParseStat returns utime+stime from the contents of /proc/<pid>/stat.
func ParseStat(b []byte) (int64, error) {
	// The command name, field 2, is in parentheses and may hold spaces and
	// parentheses itself: count fields after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc: malformed stat %q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("proc: short stat %q", b)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("proc: malformed stat %q", b)
	}
	return u + s, nil
}

// CPUTime converts ticks to a duration.
func CPUTime(ticks, perSecond int64) time.Duration {
	return time.Duration(ticks) * time.Second / time.Duration(perSecond)
}

// RSS returns the resident set size of process pid in bytes (VmRSS of
// /proc/<pid>/status).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v) // "12345 kB"
			if len(f) == 2 && f[1] == "kB" {
				n, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return n << 10, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("proc: no VmRSS for %d", pid)
}
