//go:build !unix

package gateway

import (
	"os"
	"os/exec"
)

var (
	terminate = os.Kill
	kill      = os.Kill
)

// ownProcessGroup does nothing where process groups are not available.
func ownProcessGroup(*exec.Cmd) {}

// signalGroup signals the child itself where process groups are not
// available.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		cmd.Process.Signal(sig)
	}
}
