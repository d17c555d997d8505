// Command agnara is the operator's tool for an agnara host. Today it has one
// command group, approvals, which reads and decides the durable approvals
// that gate imported remote write tools (package approval):
//
//	agnara approvals list      -db PATH [-state pending] [-limit 50]
//	agnara approvals show      -db PATH ID
//	agnara approvals approve   -db PATH ID -as APPROVER [-issuer ISS] [-note TEXT]
//	agnara approvals reject    -db PATH ID -as APPROVER [-issuer ISS] [-note TEXT]
//	agnara approvals cancel    -db PATH ID -as APPROVER [-issuer ISS] [-note TEXT]
//	agnara approvals reconcile -db PATH ID -as APPROVER [-issuer ISS] -effect committed|not_started -evidence TEXT
//
// Whoever runs it is trusted host staff: with -as it acts as that principal
// holding the approver scope. The store still refuses a decision by the
// requester (same id and issuer) and records every decision with its actor.
// See docs/approvals.md.
package main

import "os"

func main() {
	os.Exit((&cli{stdout: os.Stdout, stderr: os.Stderr}).run(os.Args[1:]))
}
