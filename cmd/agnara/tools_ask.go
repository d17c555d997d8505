package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asker answers the questions a server asks during a call (elicitations,
// confirmations among them): on a terminal by asking, else as the flags
// say, else by declining. One question at a time: the SDK may fulfil
// several of one round at once.
type asker struct {
	t       *toolsCLI
	yes     bool
	answers map[string]any

	mu          sync.Mutex
	in          *bufio.Reader
	stopSpinner func()
}

// setSpinner gives the asker the spinner to stop before it prints.
func (a *asker) setSpinner(stop func()) {
	a.mu.Lock()
	a.stopSpinner = stop
	a.mu.Unlock()
}

// formField is a property of a requested schema.
type formField struct {
	name, kind, title, description string
	enum                           []string
	required                       bool
}

// formOf reads the flat form schema of an elicitation (MCP allows only
// primitive properties).
func formOf(schema any) ([]formField, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var s struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	var fields []formField
	for name, p := range s.Properties {
		fields = append(fields, formField{name: name, kind: p.Type, title: p.Title, description: p.Description, enum: p.Enum, required: slices.Contains(s.Required, name)})
	}
	slices.SortFunc(fields, func(x, y formField) int { return strings.Compare(x.name, y.name) })
	return fields, nil
}

// isConfirmation reports whether the form is a yes/no confirmation: one
// boolean field named confirm, as agnara servers ask.
func isConfirmation(fields []formField) bool {
	return len(fields) == 1 && fields[0].name == "confirm" && fields[0].kind == "boolean"
}

func (a *asker) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopSpinner != nil {
		a.stopSpinner()
	}
	w := a.t.stderr
	p := req.Params
	if p.Mode == "url" {
		return a.openURL(p), nil
	}
	fields, err := formOf(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(w, "The server asked with a form this command cannot read (%v); declined.\n", err)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	if isConfirmation(fields) {
		switch {
		case a.yes:
			fmt.Fprintf(w, "Confirmed (-yes): %s\n", printable(p.Message))
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		case a.t.interactive:
			fmt.Fprintf(w, "%s [y/N] ", printable(p.Message))
			line, err := a.line()
			if err != nil {
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			if l := strings.ToLower(line); l == "y" || l == "yes" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		fmt.Fprintf(w, "Declined the server's confirmation (not a terminal; pass -yes to confirm): %s\n", printable(p.Message))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	switch {
	case a.answers != nil:
		fmt.Fprintf(w, "Answered the form with -answers: %s\n", printable(p.Message))
		return &mcp.ElicitResult{Action: "accept", Content: a.answers}, nil
	case a.t.interactive:
		return a.fill(p.Message, fields), nil
	}
	fmt.Fprintf(w, "Declined the server's form (not a terminal; pass -answers JSON to fill it in): %s\n", printable(p.Message))
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// openURL answers a URL elicitation: at a terminal it shows the page and
// asks whether the user opened it (this command never opens it itself);
// elsewhere, -yes or not, it declines, saying what was asked. Accept only
// says the user opened the page: the server learns the rest on its side.
func (a *asker) openURL(p *mcp.ElicitParams) *mcp.ElicitResult {
	w := a.t.stderr
	if !a.t.interactive {
		fmt.Fprintf(w, "Declined the server's request to open %s (not a terminal): %s\n", printable(p.URL), printable(p.Message))
		return &mcp.ElicitResult{Action: "decline"}
	}
	fmt.Fprintf(w, "%s\nThe server asks you to open this page in your browser:\n  %s\nOpen it, then answer: did you open it? [y/N] ", printable(p.Message), printable(p.URL))
	line, err := a.line()
	if err != nil {
		return &mcp.ElicitResult{Action: "cancel"}
	}
	if l := strings.ToLower(line); l == "y" || l == "yes" {
		return &mcp.ElicitResult{Action: "accept"}
	}
	return &mcp.ElicitResult{Action: "decline"}
}

// urlDone reports that the server says a page it asked the user to open
// is done with (notifications/elicitation/complete).
func (a *asker) urlDone(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopSpinner != nil {
		a.stopSpinner()
	}
	fmt.Fprintf(a.t.stderr, "The server says the page is done with (elicitation %s).\n", printable(req.Params.ElicitationID))
}

// fill asks for each field of a form on the terminal. An empty answer
// leaves an optional field out and cancels at a required one.
func (a *asker) fill(message string, fields []formField) *mcp.ElicitResult {
	w := a.t.stderr
	fmt.Fprintf(w, "%s (an empty answer skips a field; at a required one it cancels)\n", printable(message))
	content := map[string]any{}
	for _, f := range fields {
		label := f.name
		if f.title != "" {
			label = f.title
		}
		kind := f.kind
		if f.enum != nil {
			kind = "one of " + printable(strings.Join(f.enum, ", "))
		}
		req := ""
		if f.required {
			req = ", required"
		}
		for {
			fmt.Fprintf(w, "  %s (%s%s): ", printable(label), printable(kind), req)
			line, err := a.line()
			if err != nil {
				return &mcp.ElicitResult{Action: "cancel"}
			}
			if line == "" {
				if f.required {
					return &mcp.ElicitResult{Action: "cancel"}
				}
				break
			}
			v, err := valueOf(f, line)
			if err != nil {
				fmt.Fprintf(w, "  %v; try again\n", err)
				continue
			}
			content[f.name] = v
			break
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// valueOf converts what was typed for f.
func valueOf(f formField, s string) (any, error) {
	switch f.kind {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("want yes or no")
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want an integer")
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number")
		}
		return n, nil
	}
	if f.enum != nil && !slices.Contains(f.enum, s) {
		return nil, fmt.Errorf("want one of %s", printable(strings.Join(f.enum, ", ")))
	}
	return s, nil
}

// line reads one line from stdin, without its line ending.
func (a *asker) line() (string, error) {
	if a.in == nil {
		a.in = bufio.NewReader(a.t.stdin)
	}
	s, err := a.in.ReadString('\n')
	if err != nil && s == "" {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// startSpinner draws a spinner and label on w (a terminal) after delay,
// redrawn every tick, until the returned function is called; that clears
// the line and may be called more than once.
func startSpinner(w io.Writer, label string, delay, tick time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(delay)
		defer t.Stop()
		drawn := false
		for i := 0; ; i++ {
			select {
			case <-done:
				if drawn {
					fmt.Fprintf(w, "\r%s\r", strings.Repeat(" ", utf8Len(label)+2))
				}
				return
			case <-t.C:
				fmt.Fprintf(w, "\r%c %s", `|/-\`[i%4], label)
				drawn = true
				t.Reset(tick)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done); <-finished })
	}
}

func utf8Len(s string) int { return len([]rune(s)) }
