package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSuggested bounds the names a "did you mean" offers.
const maxSuggested = 3

// callFailed explains why the tools/call of name failed and, when the
// server refused it as invalid params (-32602, how MCP servers answer an
// unknown tool) and lists no tool of that name, suggests the listed tools
// it may stand for: a name without its prefix ("greet" for "hello.greet",
// "get_user" for "gateway.get_user" or for an upstream's tool a gateway
// binds as "gateway.dir_get_user"), or under another application's prefix
// ("users.get_user" for "gateway.get_user").
func (t *toolsCLI) callFailed(ctx context.Context, cs *mcp.ClientSession, rec *challengeRecorder, name string, err error) error {
	explained := rec.explain("tools/call", err)
	if rpc := answered(err); rpc == nil || rpc.Code != jsonrpc.CodeInvalidParams || ctx.Err() != nil {
		return explained
	}
	var like []string
	n := 0
	for tool, lerr := range cs.Tools(ctx, nil) {
		if lerr != nil {
			return explained // the suggestion is a courtesy: no list, none
		}
		if n++; n > maxListed {
			break
		}
		if tool.Name == name {
			return explained // it exists: the refusal was about something else
		}
		if len(like) < maxSuggested && stands(name, tool.Name) {
			like = append(like, tool.Name)
		}
	}
	if len(like) == 0 {
		return explained
	}
	return fmt.Errorf("%w; did you mean %s? ('agnara tools list' shows the names)", explained, strings.Join(like, " or "))
}

// stands reports whether name, which no listed tool has, may stand for the
// listed tool: it is listed's name without a prefix that ends in '.', '_'
// or '-', or the two names are equal after their last '.'.
func stands(name, listed string) bool {
	if name == "" || name == listed {
		return false
	}
	if rest, ok := strings.CutSuffix(listed, name); ok && rest != "" && strings.ContainsRune("._-", rune(rest[len(rest)-1])) {
		return true
	}
	i, j := strings.LastIndexByte(name, '.'), strings.LastIndexByte(listed, '.')
	return i >= 0 && j >= 0 && i+1 < len(name) && name[i+1:] == listed[j+1:]
}
