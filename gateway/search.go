package gateway

import (
	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// Search replaces the wall of tool definitions a caller lists with a
// search: tools/list holds search_tools and call_tool, and the tools named
// in Listed; search_tools answers the definitions of the tools that best
// match a query, among those the caller may call, never one whose
// definition is held for an operator; call_tool calls a tool found, which
// passes the same scope guard, approval, rate limit and audit as when it
// is called by its name (which keeps working). See
// [mcpexpose.Exposure.Search].
type Search struct {
	// Listed are the local names of bound tools still listed in full to
	// every caller who may call them. Default: none. (listed)
	Listed []string `yaml:"listed"`
	// Results is the most definitions one search answers, 1 to 50.
	// Default 8. (results)
	Results int `yaml:"results"`
}

// maxSearchResults is mcpexpose's bound on SearchOptions.Results.
const maxSearchResults = 50

// validateSearch checks the search key: its Listed names are bound tools'
// local names, its Results in range.
func (c *Config) validateSearch(bad func(string, ...any) func(...any)) {
	s := c.Search
	if s == nil {
		return
	}
	if s.Results < 0 || s.Results > maxSearchResults {
		bad("%d: want 1 to %d (or none, for 8)", s.Results, maxSearchResults)("search", "results")
	}
	bound := map[string]bool{}
	for _, u := range c.Upstreams {
		for _, t := range u.Tools {
			bound[t.Name] = true
		}
	}
	for i, name := range s.Listed {
		if !bound[name] {
			bad("%q is the local name of no bound tool", name)("search", "listed", i)
		}
	}
}

// searchOptions is the exposure's search of the config's, Listed by wire
// name. Every bound tool is declared, served or withdrawn (down, held,
// absent), so every name listed is one the exposure has
// (TestGatewaySearchListsWhatIsDeclared).
func searchOptions(app *agnara.App, s *Search) *mcpexpose.SearchOptions {
	o := &mcpexpose.SearchOptions{Results: s.Results}
	for _, name := range s.Listed {
		o.Listed = append(o.Listed, wireName(app, name))
	}
	return o
}
