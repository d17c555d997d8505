package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/agnara-go/agnara/internal/taskclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const catalogSynopsis = `usage: agnara resources list URL [flags]
       agnara resources read URL URI [flags]
       agnara prompts list URL [flags]
       agnara prompts get URL NAME [ARG=VALUE...] [flags]
       agnara complete URL prompt NAME ARG[=TYPED] [ARG=VALUE...] [flags]
       agnara complete URL resource TEMPLATE VAR[=TYPED] [VAR=VALUE...] [flags]
       agnara tasks get|cancel URL ID [flags]
`

const catalogUsage = catalogSynopsis + `
Reads the resources and prompts of any MCP server over streamable HTTP, as
a client would, and asks it to complete an argument:

  resources list   the resources and resource templates it shows you
  resources read   the contents of the resource at URI; for an MCP App
                   view (ui://), the origins its CSP allows, then the page
  prompts list     the prompts it shows you, with their arguments (* required)
  prompts get      the messages of the prompt NAME with its arguments
  complete         the values it suggests for the prompt argument or
                   template variable ARG, given what is TYPED so far and
                   the values already chosen for the others
  tasks get        the status of one of your tasks (2026-07-28), and its
                   result once it completed
  tasks cancel     ask the server to cancel one of your tasks

The flags are those of 'agnara tools' (run 'agnara tools help'): -era,
-protocol, -token-env, -token-url with -client-id, -json, -timeout, and
for read and get, which may ask questions, -yes and -answers.

A request the server refuses prints its reason and exits 1; a mistake on
the command line exits 2. Everything the server sent is printed escaped
when it is not printable text.
`

// catalog runs `agnara resources`, `agnara prompts` or `agnara complete`
// (group), as `agnara tools` runs.
func (c *cli) catalog(group string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	t := &toolsCLI{stdout: c.stdout, stderr: c.stderr, stdin: os.Stdin, getenv: os.Getenv, ctx: ctx}
	if f, ok := c.stderr.(*os.File); ok && isTerminal(f) {
		t.spinning = true
		t.interactive = isTerminal(os.Stdin)
	}
	return t.runCatalog(group, args)
}

// catalogCommands are the commands of each group ("" for complete, which
// has one).
var catalogCommands = map[string][]string{"resources": {"list", "read"}, "prompts": {"list", "get"}, "complete": {""}, "tasks": {"get", "cancel"}}

func (t *toolsCLI) runCatalog(group string, args []string) int {
	commands := catalogCommands[group]
	name := ""
	if group != "complete" {
		if len(args) == 0 {
			fmt.Fprintf(t.stderr, "agnara %s: missing command: %s\n\n%s", group, strings.Join(commands, " or "), catalogUsage)
			return 2
		}
		name, args = args[0], args[1:]
	}
	help := name // the command, or complete's first argument
	if group == "complete" && len(args) > 0 {
		help = args[0]
	}
	switch help {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(t.stdout, catalogUsage)
		return 0
	}
	if !slices.Contains(commands, name) {
		fmt.Fprintf(t.stderr, "agnara %s: unknown command %s: want %s\n\n%s", group, printable(name), strings.Join(commands, " or "), catalogUsage)
		return 2
	}
	label := strings.TrimSpace(group + " " + name)
	t.commandLabel = label
	return t.exit(group, name, catalogSynopsis, catalogUsage, t.catalogCommand(label, name, args))
}

// catalogCommand runs one command: label is "resources read" and the like.
func (t *toolsCLI) catalogCommand(label, name string, args []string) error {
	f, pos, err := t.parse(label, args)
	if err != nil {
		return err
	}
	want := map[string]string{
		"tasks get": "URL ID", "tasks cancel": "URL ID",
		"resources list": "URL", "resources read": "URL URI",
		"prompts list": "URL", "prompts get": "URL NAME [ARG=VALUE...]",
		"complete": "URL prompt|resource NAME ARG[=TYPED] [ARG=VALUE...]",
	}[label]
	switch {
	case len(pos) == 0:
		return fmt.Errorf("missing %s: %w", want, errUsage)
	case strings.HasSuffix(label, "list") && len(pos) > 1, label == "resources read" && len(pos) > 2:
		return fmt.Errorf("too many arguments: want %s: %w", want, errUsage)
	case label == "resources read" && len(pos) < 2:
		return fmt.Errorf("missing the resource's URI (run 'agnara resources list %s' to see them): %w", pos[0], errUsage)
	case label == "prompts get" && len(pos) < 2:
		return fmt.Errorf("missing the prompt's NAME (run 'agnara prompts list %s' to see them): %w", pos[0], errUsage)
	case strings.HasPrefix(label, "tasks ") && len(pos) != 2:
		return fmt.Errorf("want %s: the task's id, as '-task' printed it: %w", want, errUsage)
	case label == "complete" && (len(pos) < 4 || (pos[1] != "prompt" && pos[1] != "resource")):
		return fmt.Errorf("want %s, such as: agnara complete %s prompt greet name=Ad: %w", want, pos[0], errUsage)
	}
	endpoint := pos[0]
	if err := checkServerURL(endpoint); err != nil {
		return err
	}
	version, err := f.version()
	if err != nil {
		return err
	}
	if strings.HasPrefix(label, "tasks ") {
		if version < taskVersion {
			return fmt.Errorf("tasks are an extension of protocol %s, not %s: drop -era legacy or -protocol: %w", taskVersion, printable(version), errUsage)
		}
		f.task = true // declare the extension: the server answers tasks/* to no one else
	}
	var values map[string]string // prompts get's arguments, complete's context
	var arg mcp.CompleteParamsArgument
	switch label {
	case "prompts get":
		if values, err = pairs(pos[2:]); err != nil {
			return err
		}
	case "complete":
		arg.Name, arg.Value, _ = strings.Cut(pos[3], "=")
		if arg.Name == "" {
			return fmt.Errorf("%s: name the argument to complete, such as name=Ad: %w", printable(pos[3]), errUsage)
		}
		if values, err = pairs(pos[4:]); err != nil {
			return err
		}
	}
	answers, err := f.answersMap()
	if err != nil {
		return err
	}
	ctx, cancel := t.context(f)
	defer cancel()
	ask := &asker{t: t, yes: f.yes, answers: answers}
	cs, rec, err := t.connect(ctx, f, endpoint, version, ask)
	if err != nil {
		return err
	}
	defer cs.Close()
	stop := t.spin(label)
	ask.setSpinner(stop)
	defer stop()
	switch label {
	case "resources list":
		return t.listResources(ctx, cs, f, rec, stop)
	case "resources read":
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: pos[1]})
		stop()
		if err != nil {
			return rec.explain("resources/read", err)
		}
		return t.printContents(f, res)
	case "prompts list":
		return t.listPrompts(ctx, cs, f, rec, stop)
	case "prompts get":
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: pos[1], Arguments: values})
		stop()
		if err != nil {
			return rec.explain("prompts/get", err)
		}
		return t.printPrompt(f, res)
	case "tasks get":
		task, err := taskclient.Get(ctx, cs, pos[1])
		stop()
		if err != nil {
			return rec.explain("tasks/get", err)
		}
		return t.printTask(f, task)
	case "tasks cancel":
		err := taskclient.Cancel(ctx, cs, pos[1])
		stop()
		if err != nil {
			return rec.explain("tasks/cancel", err)
		}
		fmt.Fprintf(t.stderr, "task %s: cancel requested; 'agnara tasks get' shows when it has stopped\n", printable(pos[1]))
		return nil
	}
	ref := &mcp.CompleteReference{Type: "ref/prompt", Name: pos[2]}
	if pos[1] == "resource" {
		ref = &mcp.CompleteReference{Type: "ref/resource", URI: pos[2]}
	}
	params := &mcp.CompleteParams{Ref: ref, Argument: arg}
	if len(values) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: values}
	}
	res, err := cs.Complete(ctx, params)
	stop()
	if err != nil {
		return rec.explain("completion/complete", err)
	}
	if f.json {
		return t.printJSON(res)
	}
	for _, v := range res.Completion.Values {
		fmt.Fprintln(t.stdout, printable(v))
	}
	if n := len(res.Completion.Values); res.Completion.HasMore || res.Completion.Total > n {
		more := "more"
		if res.Completion.Total > n {
			more = fmt.Sprintf("%d in all", res.Completion.Total)
		}
		fmt.Fprintf(t.stderr, "(%d shown; the server has %s: type more of it)\n", n, more)
	}
	return nil
}

// printTask prints a task as tasks/get shows it: its status on stderr, and
// its result once it completed, as a direct call's.
func (t *toolsCLI) printTask(f *toolsFlags, task *taskclient.Task) error {
	if f.json {
		return t.printJSON(task)
	}
	line := fmt.Sprintf("task %s: %s", printable(task.TaskID), printable(task.Status))
	if task.StatusMessage != "" {
		line += ": " + printable(oneLine(task.StatusMessage, 200))
	}
	fmt.Fprintln(t.stderr, line)
	switch task.Status {
	case taskclient.Completed:
		var res mcp.CallToolResult
		if json.Unmarshal(task.Result, &res) != nil {
			return errors.New("the completed task's result cannot be read")
		}
		return t.show("task "+task.TaskID, f, &res)
	case taskclient.Failed:
		if task.Error != nil {
			return fmt.Errorf("task %s failed: %s (JSON-RPC error %d)", printable(task.TaskID), printable(task.Error.Message), task.Error.Code)
		}
		return errFailed
	case taskclient.Cancelled:
		return errFailed
	}
	return nil
}

// pairs reads ARG=VALUE arguments.
func pairs(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s is not ARG=VALUE, such as topic=go: %w", printable(a), errUsage)
		}
		m[k] = v
	}
	return m, nil
}

// answersMap is -answers as a JSON object, or nil.
func (f *toolsFlags) answersMap() (map[string]any, error) {
	if f.answers == "" {
		return nil, nil
	}
	var answers map[string]any
	if err := json.Unmarshal([]byte(f.answers), &answers); err != nil || answers == nil {
		return nil, fmt.Errorf("-answers %s is not a JSON object of the form's fields: %w", printable(f.answers), errUsage)
	}
	return answers, nil
}

// serverLine is the list's first line: the server, its protocol and what
// it shows.
func serverLine(cs *mcp.ClientSession) string {
	server, version := "the server", ""
	if init := cs.InitializeResult(); init != nil {
		version = init.ProtocolVersion
		if init.ServerInfo != nil {
			server = strings.TrimSpace(init.ServerInfo.Name + " " + init.ServerInfo.Version)
		}
	}
	return fmt.Sprintf("%s, protocol %s", printable(server), printable(version))
}

// maxListed bounds what a list gathers over its pages.
const maxListed = 100000

func (t *toolsCLI) listResources(ctx context.Context, cs *mcp.ClientSession, f *toolsFlags, rec *challengeRecorder, stop func()) error {
	var resources []*mcp.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			stop()
			return rec.explain("resources/list", err)
		}
		if resources = append(resources, r); len(resources) >= maxListed {
			break
		}
	}
	var templates []*mcp.ResourceTemplate
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			stop()
			return rec.explain("resources/templates/list", err)
		}
		if templates = append(templates, r); len(templates) >= maxListed {
			break
		}
	}
	stop()
	if f.json {
		if resources == nil {
			resources = []*mcp.Resource{}
		}
		if templates == nil {
			templates = []*mcp.ResourceTemplate{}
		}
		return t.printJSON(map[string]any{"resources": resources, "resourceTemplates": templates})
	}
	fmt.Fprintf(t.stdout, "%s: %d resources, %d templates\n", serverLine(cs), len(resources), len(templates))
	tw := tabwriter.NewWriter(t.stdout, 0, 0, 2, ' ', 0)
	if len(resources) > 0 {
		fmt.Fprintln(tw, "URI\tNAME\tMIME TYPE\tDESCRIPTION")
		for _, r := range resources {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(r.URI), orDash(printable(r.Name)), orDash(printable(r.MIMEType)), orDash(printable(oneLine(r.Description, 60))))
		}
	}
	if len(templates) > 0 {
		if len(resources) > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintln(tw, "TEMPLATE\tNAME\tMIME TYPE\tDESCRIPTION")
		for _, r := range templates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(r.URITemplate), orDash(printable(r.Name)), orDash(printable(r.MIMEType)), orDash(printable(oneLine(r.Description, 60))))
		}
	}
	return tw.Flush()
}

// printContents prints a resource's contents: text as it is, binary as
// its size, and an MCP App view's page after what its host would let it
// reach (its CSP).
func (t *toolsCLI) printContents(f *toolsFlags, res *mcp.ReadResourceResult) error {
	if f.json {
		return t.printJSON(res)
	}
	for _, c := range res.Contents {
		if c.Blob != nil {
			fmt.Fprintf(t.stdout, "[%s %s, %d bytes]\n", printable(c.URI), orDash(printable(c.MIMEType)), len(c.Blob))
			continue
		}
		if c.MIMEType == appMIMEType {
			t.printView(c)
		}
		for _, line := range strings.Split(strings.TrimSuffix(c.Text, "\n"), "\n") {
			fmt.Fprintln(t.stdout, printable(line))
		}
	}
	return nil
}

func (t *toolsCLI) listPrompts(ctx context.Context, cs *mcp.ClientSession, f *toolsFlags, rec *challengeRecorder, stop func()) error {
	var prompts []*mcp.Prompt
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			stop()
			return rec.explain("prompts/list", err)
		}
		if prompts = append(prompts, p); len(prompts) >= maxListed {
			break
		}
	}
	stop()
	if f.json {
		if prompts == nil {
			prompts = []*mcp.Prompt{}
		}
		return t.printJSON(map[string]any{"prompts": prompts})
	}
	fmt.Fprintf(t.stdout, "%s: %d prompts\n", serverLine(cs), len(prompts))
	if len(prompts) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(t.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARGUMENTS\tDESCRIPTION")
	for _, p := range prompts {
		var args []string
		for _, a := range p.Arguments {
			s := printable(a.Name)
			if a.Required {
				s += "*"
			}
			args = append(args, s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", printable(p.Name), orDash(strings.Join(args, " ")), orDash(printable(oneLine(p.Description, 60))))
	}
	return tw.Flush()
}

// printPrompt prints a prompt's messages, each after its role.
func (t *toolsCLI) printPrompt(f *toolsFlags, res *mcp.GetPromptResult) error {
	if f.json {
		return t.printJSON(res)
	}
	for _, m := range res.Messages {
		fmt.Fprintf(t.stdout, "%s:\n", printable(string(m.Role)))
		t.printContent("  ", m.Content)
	}
	return nil
}

// appMIMEType is the media type of an MCP App view.
const appMIMEType = "text/html;profile=mcp-app"

// cspKeys are the members of a view's _meta.ui.csp, in the order printed.
var cspKeys = []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}

// printView prints the header of an MCP App view: its URI, the origins its
// CSP lets a host allow (none when it declares none: the page may reach no
// other origin) and its border preference. The page follows.
func (t *toolsCLI) printView(c *mcp.ResourceContents) {
	fmt.Fprintf(t.stdout, "[MCP App view %s]\n", printable(c.URI))
	ui, _ := c.Meta["ui"].(map[string]any)
	csp, _ := ui["csp"].(map[string]any)
	n := 0
	for _, key := range cspKeys {
		origins, _ := csp[key].([]any)
		var list []string
		for _, o := range origins {
			if s, ok := o.(string); ok {
				list = append(list, printable(s))
			}
		}
		if len(list) > 0 {
			fmt.Fprintf(t.stdout, "[csp %s: %s]\n", key, strings.Join(list, " "))
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(t.stdout, "[csp: none, the page may reach no other origin]")
	}
	if border, _ := ui["prefersBorder"].(bool); border {
		fmt.Fprintln(t.stdout, "[prefers a border]")
	}
}
