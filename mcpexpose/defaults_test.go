package mcpexpose

import (
	"testing"

	"github.com/agnara-go/agnara/internal/docdefault"
	"github.com/agnara-go/agnara/internal/httpserver"
)

// TestDocumentedDefaults holds each default and bound the package applies
// to the value the doc comment of its field states: the constants are
// unexported, so those comments are where a service author reads them.
func TestDocumentedDefaults(t *testing.T) {
	docdefault.Check(t, ".", []docdefault.Stated{
		{Decl: "Limits.MaxBodyBytes", Says: "Default: %v", Value: docdefault.Bytes(defaultMaxBodyBytes)},
		{Decl: "Limits.SessionTimeout", Says: "Default: %v", Value: defaultSessionTimeout},
		{Decl: "Limits.MaxSessions", Says: "Default: %v; negative: no limit", Value: defaultMaxSessions},
		{Decl: "Limits.MaxSessionsPerPrincipal", Says: "Default: %v; negative: no limit", Value: defaultMaxSessionsPerPrincipal},
		{Decl: "Limits.MaxStreams", Says: "Default: %v; negative: no limit", Value: defaultMaxStreams},
		{Decl: "Limits.MaxStreamsPerPrincipal", Says: "Default: %v; negative: no limit", Value: defaultMaxStreamsPerPrincipal},
		{Decl: "Limits.StreamLifetime", Says: "Default: %v", Value: defaultStreamLifetime},
		{Decl: "Limits.StreamKeepAlive", Says: "Default: %v", Value: defaultStreamKeepAlive},
		{Decl: "Limits.ReplayBytes", Says: "Default: %v", Value: docdefault.Bytes(defaultReplayBytes)},
		{Decl: "Limits.PollRetry", Says: "Default: %v", Value: defaultPollRetry},

		{Decl: "HTTPTimeouts.ReadHeader", Says: "Default: %v", Value: httpserver.DefaultReadHeaderTimeout},
		{Decl: "HTTPTimeouts.Read", Says: "Default: %v", Value: httpserver.DefaultReadTimeout},
		{Decl: "HTTPTimeouts.Read", Says: "ample for a %v body", Value: docdefault.Bytes(defaultMaxBodyBytes)},
		{Decl: "HTTPTimeouts.Write", Says: "Default: %v", Value: httpserver.DefaultWriteTimeout},
		{Decl: "HTTPTimeouts.Idle", Says: "Default: %v", Value: httpserver.DefaultIdleTimeout},
		{Decl: "NewHTTPServer", Says: "a %v header limit", Value: docdefault.Bytes(httpserver.DefaultMaxHeaderBytes)},

		{Decl: "TaskOptions.TTL", Says: "Default: %v", Value: defaultTaskTTL},
		{Decl: "TaskOptions.TTL", Says: "at most %v", Value: maxTaskTTL},
		{Decl: "TaskOptions.PollInterval", Says: "Default: %v", Value: defaultTaskPollInterval},
		{Decl: "TaskOptions.Heartbeat", Says: "Default: %v", Value: defaultTaskHeartbeat},
		{Decl: "TaskOptions.MaxTasks", Says: "Default: %v; negative: no limit", Value: defaultMaxTasks},
		{Decl: "TaskOptions.MaxTasksPerPrincipal", Says: "Default: %v; negative: no limit", Value: defaultMaxTasksPerPrincipal},
	})
}
