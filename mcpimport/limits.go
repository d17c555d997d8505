package mcpimport

import (
	"fmt"
	"time"
)

// Limits bound what discovery and calls accept from a remote server. Each
// zero field means its default; a limit may be lowered but not raised,
// except CallTimeout, which may be raised to at most [MaxCallTimeout].
//
// These are limits on decoded values: by the time they are checked, the SDK
// has already read and decoded the message. The host's transport must also
// bound frames and bodies (for HTTP, an http.Client with a timeout and a
// response size limit; for stdio, the child process).
type Limits struct {
	// Pages is the most tools/list pages discovery reads. Default 32.
	Pages int
	// Tools is the most tools the remote catalog may list, selected or
	// not. Default 256.
	Tools int
	// CatalogBytes bounds the whole listed catalog (every tool definition,
	// as JSON). Default 1 MiB.
	CatalogBytes int
	// SchemaBytes bounds each selected input or output schema, including a
	// root "$schema". Default 64 KiB.
	SchemaBytes int
	// DescriptionBytes bounds each selected tool's description. Default 8 KiB.
	DescriptionBytes int
	// ObjectBytes bounds the arguments sent and the structured content of
	// each result. Default 64 KiB.
	ObjectBytes int
	// ContentBlocks is the most content blocks a result may hold. Default 128.
	ContentBlocks int
	// BlockBytes bounds each content block of a result: its text, its
	// decoded image or audio data, its embedded resource's text or blob,
	// with the block's URI, names and MIME type. Default 1 MiB.
	BlockBytes int
	// ResultBytes bounds a whole result: every content block, counted as
	// for BlockBytes, and the structured content. Default 4 MiB.
	ResultBytes int
	// CallTimeout bounds each tools/call (and each resources/read and
	// prompts/get). Default 30 s; at most 300 s.
	CallTimeout time.Duration
	// Resources is the most resources the remote server may list, selected
	// or not, and separately the most resource templates; Prompts the most
	// prompts. Default 256 each. They bound [DiscoverFeatures], which holds
	// the three lists together within CatalogBytes, each selected
	// description within DescriptionBytes, each read's contents and each
	// prompt's messages within ObjectBytes and ContentBlocks.
	Resources int
	Prompts   int
	// UIBytes bounds the page of each selected tool's MCP App view
	// ([UI]): the text of the ui:// resource it links. Default 1 MiB.
	UIBytes int
}

// MaxCallTimeout is the largest call timeout [Limits] accept.
const MaxCallTimeout = 300 * time.Second

// DefaultLimits returns the limits a zero [Limits] stands for. They are also
// the ceilings: a limit may be lowered below its default, never raised
// (except CallTimeout, up to [MaxCallTimeout]). A function, not a variable,
// so that no importer can raise a ceiling for every other one.
func DefaultLimits() Limits {
	return Limits{
		Pages:            32,
		Tools:            256,
		CatalogBytes:     1 << 20,
		SchemaBytes:      64 << 10,
		DescriptionBytes: 8 << 10,
		ObjectBytes:      64 << 10,
		ContentBlocks:    128,
		BlockBytes:       1 << 20,
		ResultBytes:      4 << 20,
		CallTimeout:      30 * time.Second,
		Resources:        256,
		Prompts:          256,
		UIBytes:          1 << 20,
	}
}

// resolve fills in defaults and checks the bounds.
func (l Limits) resolve() (Limits, error) {
	d := DefaultLimits()
	ints := []struct {
		name string
		v    *int
		def  int
	}{
		{"Pages", &l.Pages, d.Pages},
		{"Tools", &l.Tools, d.Tools},
		{"CatalogBytes", &l.CatalogBytes, d.CatalogBytes},
		{"SchemaBytes", &l.SchemaBytes, d.SchemaBytes},
		{"DescriptionBytes", &l.DescriptionBytes, d.DescriptionBytes},
		{"ObjectBytes", &l.ObjectBytes, d.ObjectBytes},
		{"ContentBlocks", &l.ContentBlocks, d.ContentBlocks},
		{"BlockBytes", &l.BlockBytes, d.BlockBytes},
		{"ResultBytes", &l.ResultBytes, d.ResultBytes},
		{"Resources", &l.Resources, d.Resources},
		{"Prompts", &l.Prompts, d.Prompts},
		{"UIBytes", &l.UIBytes, d.UIBytes},
	}
	for _, f := range ints {
		switch {
		case *f.v == 0:
			*f.v = f.def
		case *f.v < 0 || *f.v > f.def:
			return l, newError(BindingInvalid, "", "Limits.%s = %d: want 1..%d (limits can be lowered, not raised)", f.name, *f.v, f.def)
		}
	}
	switch {
	case l.CallTimeout == 0:
		l.CallTimeout = d.CallTimeout
	case l.CallTimeout < 0 || l.CallTimeout > MaxCallTimeout:
		return l, newError(BindingInvalid, "", "Limits.CallTimeout = %s: want a positive duration of at most %s", l.CallTimeout, MaxCallTimeout)
	}
	return l, nil
}

func (l Limits) String() string {
	return fmt.Sprintf("pages=%d tools=%d catalog=%dB schema=%dB description=%dB object=%dB blocks=%d block=%dB result=%dB timeout=%s resources=%d prompts=%d ui=%dB",
		l.Pages, l.Tools, l.CatalogBytes, l.SchemaBytes, l.DescriptionBytes, l.ObjectBytes, l.ContentBlocks, l.BlockBytes, l.ResultBytes, l.CallTimeout, l.Resources, l.Prompts, l.UIBytes)
}
