package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/canonjson"
	"github.com/agnara-go/agnara/mcpimport"
)

// LockVersion is the version of the lock file's format. Entries with a
// view (ADR 85) did not change it: a lock without views is read as
// before, and a gateway that predates views refuses a lock with one (its
// entry has a member it does not know), which fails closed.
const LockVersion = 1

// Lock is what a gateway's lock file holds: for each bound tool an
// operator accepted, the definition accepted (its [Pin]). A gateway serves
// a bound tool only while the definition its upstream offers is the one
// pinned; any other is held, unlisted, answering
// [ReasonDefinitionChanged], until an operator accepts it (ADR 42).
//
// The file is JSON, written by [Lock.WriteFile] (the command `agnara
// gateway accept`) sorted by upstream and local name, each pin's entry in
// its canonical form with its keys sorted, so that a change to one tool is
// a small, readable diff in a pull request. A tool's MCP App view is part
// of its entry ([mcpimport.Entry.UI], member "ui", its page line by line):
// the gateway serves the view from the pin, never from the upstream (ADR
// 85). Lock files without views read as they always have.
//
// A Lock is immutable and safe for concurrent use; its accessors return
// copies.
type Lock struct {
	pins []Pin // sorted by upstream, then local name
}

// Pin is one accepted definition: the upstream it comes from, the bound
// tool's entry as discovery imported it (names, policy, description,
// schemas, the MCP App view the tool links with its page, and the
// binding's declarations: what the entry's identity covers), and the
// remote tool's annotations, which the identity does not cover but the
// pin does. A gateway serves a tool's view from its pin, the accepted
// bytes, never from its upstream (ADR 85).
type Pin struct {
	Upstream string
	Entry    mcpimport.Entry
}

// NewLock returns a lock of pins. Two pins of one local name, a pin
// without an upstream and an entry without an identity are errors.
func NewLock(pins []Pin) (*Lock, error) {
	l := &Lock{pins: make([]Pin, 0, len(pins))}
	seen := map[string]bool{}
	var errs []error
	for _, p := range pins {
		switch {
		case p.Upstream == "":
			errs = append(errs, fmt.Errorf("pin %q: no upstream", p.Entry.Name))
			continue
		case seen[p.Entry.Name]:
			errs = append(errs, fmt.Errorf("pin %q: the local name is pinned twice", p.Entry.Name))
			continue
		}
		if _, err := p.Entry.Identity(); err != nil {
			errs = append(errs, fmt.Errorf("pin %q: %w", p.Entry.Name, err))
			continue
		}
		seen[p.Entry.Name] = true
		l.pins = append(l.pins, clonePin(p))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(l.pins, func(a, b Pin) int {
		return cmp.Or(strings.Compare(a.Upstream, b.Upstream), strings.Compare(a.Entry.Name, b.Entry.Name))
	})
	return l, nil
}

// Pins returns the pins, sorted by upstream, then local name.
func (l *Lock) Pins() []Pin {
	out := make([]Pin, len(l.pins))
	for i, p := range l.pins {
		out[i] = clonePin(p)
	}
	return out
}

// Pin returns the pin of local tool name. A nil *Lock pins nothing.
func (l *Lock) Pin(name string) (Pin, bool) {
	if l == nil {
		return Pin{}, false
	}
	for _, p := range l.pins {
		if p.Entry.Name == name {
			return clonePin(p), true
		}
	}
	return Pin{}, false
}

func clonePin(p Pin) Pin {
	e := p.Entry
	e.InputSchema = slices.Clone(e.InputSchema)
	e.OutputSchema = slices.Clone(e.OutputSchema)
	e.Annotations = slices.Clone(e.Annotations)
	if e.Authorization != nil {
		a := *e.Authorization
		e.Authorization = &a
	}
	if ui := e.UI; ui != nil {
		c := *ui
		c.CSP = mcpimport.UICSP{
			ConnectDomains: slices.Clone(ui.CSP.ConnectDomains), ResourceDomains: slices.Clone(ui.CSP.ResourceDomains),
			FrameDomains: slices.Clone(ui.CSP.FrameDomains), BaseURIDomains: slices.Clone(ui.CSP.BaseURIDomains),
		}
		e.UI = &c
	}
	return Pin{Upstream: p.Upstream, Entry: e}
}

type lockDoc struct {
	LockVersion int      `json:"lockVersion"`
	Pins        []pinDoc `json:"pins"`
}

type pinDoc struct {
	Upstream    string          `json:"upstream"`
	Identity    string          `json:"identity"`
	Entry       mcpimport.Entry `json:"entry"`
	Annotations json.RawMessage `json:"annotations"`
}

// MarshalJSON returns the lock file's document, indented:
//
//	{
//	  "lockVersion": 1,
//	  "pins": [
//	    {
//	      "upstream": "files",
//	      "identity": "sha256:…",
//	      "entry": {"concurrencySafe": true, "description": "…", "inputSchema": {…}, "localName": "files_read", …},
//	      "annotations": {"readOnlyHint": true}
//	    }
//	  ]
//	}
//
// identity is the entry's ([mcpimport.Entry.Identity]), so that a reader
// (and [ParseLock]) can check that the entry shown is the one pinned.
// Characters HTML treats specially are not escaped: a reviewer reads what
// the upstream wrote.
func (l *Lock) MarshalJSON() ([]byte, error) {
	doc := lockDoc{LockVersion: LockVersion, Pins: make([]pinDoc, len(l.pins))}
	for i, p := range l.pins {
		id, err := p.Entry.Identity()
		if err != nil {
			return nil, err
		}
		ann := p.Entry.Annotations
		if ann == nil {
			ann = json.RawMessage("null")
		}
		doc.Pins[i] = pinDoc{Upstream: p.Upstream, Identity: id, Entry: p.Entry, Annotations: ann}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteFile writes the lock to path, replacing the file whole (a
// temporary file beside it, then a rename), so that a gateway reading it
// meanwhile reads the old lock or the new one, never part of either.
func (l *Lock) WriteFile(path string) error {
	b, err := l.MarshalJSON()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// ReadLock reads the lock file at path ([ParseLock]). A missing file is an
// error that errors.Is reports as fs.ErrNotExist.
func ReadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseLock(path, data)
}

// ParseLock reads a lock file's document ([Lock.MarshalJSON]); name is the
// file's name in messages. It is strict: an unknown key, another
// lockVersion, a pin whose identity is not its entry's (a hand-edited
// entry), and a local name pinned twice are errors.
func ParseLock(name string, data []byte) (*Lock, error) {
	var doc lockDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: text after the lock document", name)
	}
	if doc.LockVersion != LockVersion {
		return nil, fmt.Errorf("%s: lockVersion %d: this gateway reads version %d", name, doc.LockVersion, LockVersion)
	}
	pins := make([]Pin, 0, len(doc.Pins))
	var errs []error
	for i, d := range doc.Pins {
		e := d.Entry
		id, err := e.Identity()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: pins[%d] (%s): %w", name, i, e.Name, err))
			continue
		case id != d.Identity:
			errs = append(errs, fmt.Errorf("%s: pins[%d] (%s): the identity is not the entry's (%s): was the entry edited by hand? `agnara gateway accept` writes pins", name, i, e.Name, id))
			continue
		}
		if len(d.Annotations) > 0 && string(d.Annotations) != "null" {
			if e.Annotations, err = canonjson.Canonicalize(d.Annotations); err != nil {
				errs = append(errs, fmt.Errorf("%s: pins[%d] (%s): annotations: %w", name, i, e.Name, err))
				continue
			}
		}
		pins = append(pins, Pin{Upstream: d.Upstream, Entry: e})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	l, err := NewLock(pins)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// Change is how the definition of a bound tool, as its upstream offers it
// now, compares with the one its lock file pins.
type Change struct {
	// Upstream, Name and Remote name the bound tool: its upstream, local
	// name and remote name.
	Upstream, Name, Remote string
	// Reason is empty when the two agree. Otherwise it is
	// [ReasonDefinitionUnaccepted] when the lock pins nothing for the tool,
	// [ReasonDefinitionChanged] when the pin differs (Fields says where),
	// or, in an [Inspect] review, why the upstream's definition could not
	// be read at all: the reason its upstream failed, or the reason a
	// binding could not import the tool (mcpimport.SchemaUnsupported, ...).
	Reason execution.Reason
	// Fields are what differs, by the lock file's keys: "upstream",
	// "annotations", and the keys of the entry ("description",
	// "inputSchema", "outputSchema", "policy", "remoteName",
	// "authorization", "concurrencySafe", "schemaProfile"), its view's
	// by the members of "ui" ("ui.html", "ui.csp", "ui.uri",
	// "ui.prefersBorder", "ui.mimeType": each of them when the tool
	// gained or lost a view), sorted.
	Fields []string
}

// compare compares the live definition of a bound tool with its pin (nil
// when the lock pins none).
func compare(pin *Pin, live Pin) Change {
	c := Change{Upstream: live.Upstream, Name: live.Entry.Name, Remote: live.Entry.RemoteName}
	if pin == nil {
		c.Reason = ReasonDefinitionUnaccepted
		return c
	}
	was, errA := pin.Members()
	now, errB := live.Members()
	switch {
	case errA != nil || errB != nil:
		// Not for pins discovery or ParseLock made; they differ, as far as
		// anyone can tell.
		c.Fields = []string{"entry"}
	default:
		for k, v := range was {
			if w, ok := now[k]; !ok || !bytes.Equal(v, w) {
				c.Fields = append(c.Fields, k)
			}
		}
		for k := range now {
			if _, ok := was[k]; !ok {
				c.Fields = append(c.Fields, k)
			}
		}
	}
	slices.Sort(c.Fields)
	if len(c.Fields) > 0 {
		c.Reason = ReasonDefinitionChanged
	}
	return c
}

// Members returns what the pin pins, member by member, each value in
// canonical JSON, under the names [Change.Fields] uses: the members of the
// entry's document ([mcpimport.Entry.MarshalJSON]: "description",
// "inputSchema", "outputSchema", "policy", ...), "upstream", and
// "annotations" (null when the tool lists none). The entry's view, when it
// has one, is given by its members instead of whole: "ui.html" (the page,
// one string), "ui.csp" (an object, {} without a policy), "ui.uri",
// "ui.prefersBorder" and "ui.mimeType". Two pins pin the same definition
// when their members are equal. The map is new on every call.
func (p Pin) Members() (map[string]json.RawMessage, error) {
	doc, err := p.Entry.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	up, err := json.Marshal(p.Upstream)
	if err != nil {
		return nil, err
	}
	m["upstream"] = up
	m["annotations"] = json.RawMessage("null")
	if len(p.Entry.Annotations) > 0 {
		m["annotations"] = slices.Clone(p.Entry.Annotations)
	}
	delete(m, "ui")
	if ui := p.Entry.UI; ui != nil {
		csp := struct {
			BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
			ConnectDomains  []string `json:"connectDomains,omitempty"`
			FrameDomains    []string `json:"frameDomains,omitempty"`
			ResourceDomains []string `json:"resourceDomains,omitempty"`
		}{ui.CSP.BaseURIDomains, ui.CSP.ConnectDomains, ui.CSP.FrameDomains, ui.CSP.ResourceDomains}
		for k, v := range map[string]any{"ui.html": ui.HTML, "ui.csp": csp, "ui.uri": ui.URI, "ui.prefersBorder": ui.PrefersBorder, "ui.mimeType": mcpimport.UIMIMEType} {
			b, err := json.Marshal(v)
			if err == nil {
				b, err = canonjson.Canonicalize(b)
			}
			if err != nil {
				return nil, err
			}
			m[k] = b
		}
	}
	return m, nil
}

// lockPath is where the lock file of the config file name lives: beside
// it, with its extension replaced by ".lock" (gateway.yaml: gateway.lock).
func lockPath(name string) string {
	return strings.TrimSuffix(name, filepath.Ext(name)) + ".lock"
}
