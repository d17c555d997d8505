package wire

// scanner reads the JSON values the fast path needs from a body already
// known to be valid JSON, and gives up (bad) on anything it does not
// read exactly as the SDK's decoder would.
type scanner struct {
	b        []byte
	i        int
	bad      bool
	depthMax int
}

func (p *scanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace is left.
func (p *scanner) end() bool {
	p.ws()
	return !p.bad && p.i == len(p.b)
}

// object reads an object, calling field with each key (without escapes)
// positioned at its value; field reads the value and reports whether to go
// on.
func (p *scanner) object(field func(key []byte) bool) bool {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.ws()
		key := p.stringBytes()
		if key == nil || p.bad {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		if !field(key) || p.bad {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// stringBytes reads a string of printable ASCII without escapes and
// returns its contents (non-nil, possibly empty), or nil.
func (p *scanner) stringBytes() []byte {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		p.bad = true
		return nil
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			p.i = j + 1
			return p.b[start:j:j]
		}
		if c == '\\' || c < 0x20 || c > 0x7e {
			p.bad = true
			return nil
		}
	}
	p.bad = true
	return nil
}

// plainString reads a string of printable ASCII without escapes.
func (p *scanner) plainString() string {
	s := p.stringBytes()
	if s == nil {
		return ""
	}
	return string(s)
}

// id reads a request id the SDK echoes byte for byte: a plain string, or
// an integer of at most 15 digits (exact in the float64 the SDK decodes
// it into), not -0.
func (p *scanner) id() []byte {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '"' {
		if p.stringBytes() == nil {
			return nil
		}
		return p.b[start:p.i:p.i]
	}
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	n := j - digits
	if n == 0 || n > 15 || (n > 1 && p.b[digits] == '0') {
		return nil
	}
	if j < len(p.b) && (p.b[j] == '.' || p.b[j] == 'e' || p.b[j] == 'E') {
		return nil
	}
	if digits > start && n == 1 && p.b[digits] == '0' {
		return nil // -0 is echoed as 0
	}
	p.i = j
	return p.b[start:j:j]
}

// skipValue skips any value, which the body's validity guarantees is
// well formed.
func (p *scanner) skipValue() bool {
	p.ws()
	if p.i >= len(p.b) {
		return false
	}
	switch p.b[p.i] {
	case '{', '[':
		return p.rawComposite() != nil
	case '"':
		p.i++
		for p.i < len(p.b) && p.b[p.i] != '"' {
			if p.b[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
		return p.i <= len(p.b)
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		p.i++
	}
	return true
}

// rawObject skips an object and returns its bytes, or nil when the value
// is not an object.
func (p *scanner) rawObject() []byte {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil
	}
	return p.rawComposite()
}

// rawComposite skips the object or array at p.i and returns its bytes.
func (p *scanner) rawComposite() []byte {
	start := p.i
	depth := 0
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch c {
		case '"':
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			p.i++
		case '{', '[':
			depth++
			if depth > p.depthMax {
				p.depthMax = depth
			}
		case '}', ']':
			depth--
			if depth == 0 {
				if p.i > len(p.b) {
					return nil
				}
				return p.b[start:p.i:p.i]
			}
		}
	}
	p.bad = true
	return nil
}
