package mcpimport

import "github.com/agnara-go/agnara/execution"

// validity is the monitor generation a catalog is known to be current at,
// and the channel that closes when that generation passes.
type validity struct {
	gen   uint64
	stale <-chan struct{}
}

// Absence is a bound tool that a discovery with [Options.AllowAbsent] left
// out of its catalog, and why. Nothing of it is registered: a host serving
// the catalog neither lists nor calls it until a later discovery imports it.
type Absence struct {
	// Name is the binding's local name.
	Name string
	// RemoteName is the bound remote tool's name.
	RemoteName string
	// Reason is the first problem's reason: [ToolMissing],
	// [SchemaUnsupported], [DescriptionTooLarge] or [UIUnsupported].
	Reason execution.Reason
	// Err holds every problem found with the tool, each an [*Error].
	Err error
}

// Absent returns the bound tools the discovery left out, sorted by local
// name: none unless it was made with [Options.AllowAbsent]. The slice is new
// on every call.
func (c *Catalog) Absent() []Absence {
	out := make([]Absence, len(c.absent))
	copy(out, c.absent)
	return out
}

// Stale returns a channel that is closed once the catalog is stale: the
// remote catalog changed, or the monitor was closed. Hosts select on it to
// know when to discover again. After a successful [Catalog.Renew] it returns
// a new channel, for the next change.
func (c *Catalog) Stale() <-chan struct{} { return c.valid.Load().stale }

// Renew makes c current again when next, a later discovery on the same
// session, imported exactly what c imports: the same snapshot digest (which
// covers every remote tool definition and host declaration it records) and
// the same absent tools. It reports whether it did. A host that rediscovers
// after a tools/list_changed keeps serving c when Renew reports true, and
// discards next, so that a change that leaves the imported catalog as it was
// disturbs nobody; when it reports false, the host serves next instead.
//
// Calls of c that were already out when the remote catalog changed still
// fail with [ReasonCatalogStale]: their answers may come from the changed
// catalog. What the digest does not cover (local scopes, scope validators,
// local descriptions) stays c's. Renew is safe for concurrent use with
// calls of c.
func (c *Catalog) Renew(next *Catalog) bool {
	if next == nil || next == c || next.session != c.session || next.monitor != c.monitor ||
		next.snap.digest != c.snap.digest || !sameAbsences(c.absent, next.absent) {
		return false
	}
	v := next.valid.Load()
	for {
		old := c.valid.Load()
		if old.gen >= v.gen {
			return old.gen == v.gen
		}
		if c.valid.CompareAndSwap(old, v) {
			return true
		}
	}
}

func sameAbsences(a, b []Absence) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].RemoteName != b[i].RemoteName {
			return false
		}
	}
	return true
}
