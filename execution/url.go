package execution

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// maxURLBytes bounds the URL of a URL question: room for a sign-in
// address with its state, challenge and scopes, not for a payload.
const maxURLBytes = 4 << 10

// AskURL asks the caller to send its user to rawURL under key, with
// message saying why (for MCP: an elicitation in url mode, ADR 0078). It
// returns nil once the user accepted — agreed to open the URL, which says
// nothing of what happened there: the capability learns that on its own
// side (the third party's callback reaching it, a token in its store), and
// then tells the caller with [Context.URLDone]. A declined or cancelled
// question ends the invocation: the error is a Forbidden [*Failure] to
// return as is. Until the caller has answered, the error is
// [ErrInputRequired], as for [Ask]. Only an answer to the question as asked
// counts, as for [Context.Confirm]: the user must have been shown the URL.
//
// The URL must be absolute, https (or http to a loopback host: localhost,
// 127.0.0.0/8, ::1), without user information, and at most 4 KiB; the
// message must not be empty. Anything else is an error to return as is
// (the invocation ends with an internal failure, its cause logged). A URL
// is shown to a person and may be logged on the way: never put a secret
// or a token in it; a one-time identifier the capability maps to its
// state is what it should carry.
//
// A client that cannot open URLs (for MCP, one that did not declare
// elicitation.url) is never asked: the call fails saying what it lacks.
// Check [Context.CanAsk] with [URLElicitation] to do without.
func (c *Context) AskURL(key, message, rawURL string) error {
	if key == ConfirmKey {
		return errReservedKey
	}
	if err := c.mayAsk(); err != nil {
		return err
	}
	if err := checkURLQuestion(message, rawURL); err != nil {
		return err
	}
	if a, ok := c.inter.answer(key, URLElicitation, true); ok {
		switch a.Action {
		case "accept":
			return nil
		case "decline", "cancel":
			return declined(a.Action)
		}
		return invalidInput([]Violation{{Path: "/action", Message: fmt.Sprintf("%q is not an answer: want accept, decline or cancel", a.Action)}}, false)
	}
	return c.inter.ask(key, InputRequest{Kind: URLElicitation, Message: message, URL: rawURL})
}

// URLDone tells the caller that the out-of-band interaction of the URL
// question asked under key ([Context.AskURL], or one relayed with
// [Context.Relay]) has finished, so that a client waiting on it can go on
// (for MCP at 2025-11-25: notifications/elicitation/complete with the
// question's elicitation id; at 2026-07-28, which has no such notice,
// nothing is sent). Call it once the capability has seen the interaction
// finish, before or instead of asking anything else. Telling is best
// effort: a notice that cannot be delivered is dropped. The error says
// that no URL question under key was accepted in this call.
func (c *Context) URLDone(key string) error {
	a, ok := c.inter.answers[key]
	if !ok || a.Kind != URLElicitation || a.Action != "accept" {
		return fmt.Errorf("execution: no accepted URL question under %q to tell the caller is done", key)
	}
	if c.inter.urlDone != nil {
		c.inter.urlDone(key)
	}
	return nil
}

// checkURLQuestion checks a URL question: a message, and a URL the user
// may be sent to (see [Context.AskURL]).
func checkURLQuestion(message, rawURL string) error {
	if message == "" {
		return errors.New("execution: a URL question needs a message")
	}
	return checkURL(rawURL)
}

// checkURL reports why rawURL is not an address a caller may be asked to
// open ([Context.AskURL]), or nil.
func checkURL(rawURL string) error {
	bad := func(why string) error {
		return fmt.Errorf("execution: the URL of a URL question %s", why)
	}
	if len(rawURL) > maxURLBytes {
		return bad(fmt.Sprintf("is %d bytes: at most %d", len(rawURL), maxURLBytes))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return bad("does not parse")
	}
	switch {
	case !u.IsAbs() || u.Opaque != "":
		return bad("must be absolute (https://host/...)")
	case u.User != nil:
		return bad("must not carry user information (user@ or user:password@)")
	case u.Host == "" || u.Hostname() == "":
		return bad("must name a host")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if loopback(u.Hostname()) {
			return nil
		}
		return bad("must be https: http only to a loopback host (localhost, 127.0.0.0/8, ::1)")
	}
	return bad(fmt.Sprintf("has scheme %q: want https (or http to a loopback host)", u.Scheme))
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
