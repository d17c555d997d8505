package main

import (
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// XMCPHeaderInput is the input of test_x_mcp_header: its region argument is
// a header parameter (SEP-2243), mirrored by 2026-07-28 clients in
// Mcp-Param-Region and checked against the body by the handler.
type XMCPHeaderInput struct {
	Region string `json:"region" mcp:"header=Region" jsonschema:"description=The region; mirrored in Mcp-Param-Region"`
	Level  int    `json:"level,omitempty" jsonschema:"description=An argument no header mirrors"`
}

// headerFixtures are the tools of the http-custom-header-server-validation
// scenario, which calls the first listed tool with a string x-mcp-header
// property and varies only that header.
func headerFixtures() []fixture {
	return []fixture{
		{"test_x_mcp_header", "Echoes its region; region is a header parameter (Mcp-Param-Region).", func(in XMCPHeaderInput) ([]execution.Content, error) {
			return []execution.Content{execution.Text{Text: fmt.Sprintf("region=%s level=%d", in.Region, in.Level)}}, nil
		}, agnara.CapabilityOptions{Annotations: agnara.ReadOnly}},
	}
}
