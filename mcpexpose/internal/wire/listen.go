package wire

// Listen is a 2026-07-28 subscriptions/listen the edge holds itself, as
// the strict scanner read it from its body (Read).
type Listen struct {
	ID   []byte // the id token as sent: a string without escapes, or an integer
	Meta []byte // the params' _meta object, as sent

	// What the params' notifications ask for.
	Tools, Prompts, Resources bool
	URIs                      []string // resourceSubscriptions, as sent (nil for none)
	TaskIDs                   []string // taskIds, as sent (nil for none)
}

// Read reads body as a single subscriptions/listen the edge holds: an
// object of exactly "jsonrpc": "2.0", an "id", "method" and "params", each
// once; params of exactly a "_meta" object and a "notifications" object,
// whose fields are toolsListChanged, promptsListChanged and
// resourcesListChanged (true or false), resourceSubscriptions and taskIds
// (lists of plain strings), each at most once. Anything else — a null, an
// escape, a field the SDK would ignore — reports false: the SDK's.
func (l *Listen) Read(body []byte) bool {
	var p scanner
	p.b = body
	var version, method string
	var params []byte
	var seen [4]bool
	ok := p.object(func(key []byte) bool {
		var i int
		switch string(key) {
		case "jsonrpc":
			i, version = 0, p.plainString()
		case "id":
			i = 1
			l.ID = p.id()
			if l.ID == nil {
				return false
			}
		case "method":
			i, method = 2, p.plainString()
		case "params":
			i = 3
			params = p.rawObject()
			if params == nil {
				return false
			}
		default:
			return false
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		return !p.bad
	})
	if !ok || !p.end() || !seen[1] || !seen[3] || version != "2.0" || method != "subscriptions/listen" || p.depthMax > fastMaxDepth {
		return false
	}
	var q scanner
	q.b = params
	var notes []byte
	ok = q.object(func(key []byte) bool {
		switch string(key) {
		case "_meta":
			if l.Meta != nil {
				return false
			}
			l.Meta = q.rawObject()
			return l.Meta != nil
		case "notifications":
			if notes != nil {
				return false
			}
			notes = q.rawObject()
			return notes != nil
		}
		return false
	})
	if !ok || !q.end() || l.Meta == nil || notes == nil {
		return false
	}
	return l.readNotifications(notes)
}

// readNotifications reads the notifications object b into l.
func (l *Listen) readNotifications(b []byte) bool {
	var p scanner
	p.b = b
	var seen [5]bool
	ok := p.object(func(key []byte) bool {
		var i int
		switch string(key) {
		case "toolsListChanged":
			i = 0
			l.Tools = p.boolean()
		case "promptsListChanged":
			i = 1
			l.Prompts = p.boolean()
		case "resourcesListChanged":
			i = 2
			l.Resources = p.boolean()
		case "resourceSubscriptions":
			i = 3
			l.URIs = p.plainStrings()
		case "taskIds":
			i = 4
			l.TaskIDs = p.plainStrings()
		default:
			return false
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		return !p.bad
	})
	return ok && p.end()
}

// boolean reads true or false.
func (p *scanner) boolean() bool {
	rest := p.b[p.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		p.i += 4
		return true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		p.i += 5
		return false
	}
	p.bad = true
	return false
}

// plainStrings reads a list of plain strings (stringBytes), returning a
// non-nil list, or nil and bad.
func (p *scanner) plainStrings() []string {
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		p.bad = true
		return nil
	}
	p.i++
	out := []string{}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return out
	}
	for {
		p.ws()
		s := p.stringBytes()
		if s == nil {
			return nil
		}
		out = append(out, string(s))
		p.ws()
		if p.i >= len(p.b) {
			p.bad = true
			return nil
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out
		default:
			p.bad = true
			return nil
		}
	}
}
