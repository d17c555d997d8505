package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// cli runs one invocation. Not safe for concurrent use: one cli, one run.
type cli struct {
	stdout, stderr io.Writer
	clock          func() time.Time // nil: time.Now; tests fix it
}

const usage = `usage: agnara approvals <command> (-db PATH | -postgres DSN) [flags] [ID]

The approvals are the host's: -db names its SQLite file, -postgres its
PostgreSQL database (e.g. postgres://approver@db.internal/agnara; keep the
password out of the command line: PGPASSWORD or ~/.pgpass). This command
never creates or migrates a database; the host does.

Commands:
  list       list approvals, newest first
  show       show one approval: intent, arguments, decision, receipt, events
  approve    approve a pending approval
  reject     reject a pending approval
  cancel     cancel a pending or approved approval
  reconcile  record what an unknown effect turned out to be, with evidence
  serve      serve the approval inbox in the browser (docs/approvals.md)
  connections  list one person's grants a gateway acts with, or revoke one
             (credentials consent, docs/gateway.md)

Run 'agnara approvals <command> -h' for a command's flags.
`

// run executes args (without the program name) and returns the exit code.
func (c *cli) run(args []string) int {
	if len(args) == 0 || args[0] != "approvals" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(c.stdout, usage)
			return 0
		}
		fmt.Fprint(c.stderr, "agnara: expected the command group 'approvals'\n\n"+usage)
		return 1
	}
	args = args[1:]
	if len(args) == 0 {
		fmt.Fprint(c.stderr, "agnara approvals: missing command\n\n"+usage)
		return 1
	}
	cmds := map[string]func(name string, args []string) error{
		"list":        c.list,
		"show":        c.show,
		"approve":     c.decide,
		"reject":      c.decide,
		"cancel":      c.decide,
		"reconcile":   c.reconcile,
		"serve":       c.serve,
		"connections": c.connections,
	}
	name := args[0]
	if name == "-h" || name == "-help" || name == "--help" || name == "help" {
		fmt.Fprint(c.stdout, usage)
		return 0
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(c.stderr, "agnara approvals: unknown command %q\n\n%s", name, usage)
		return 1
	}
	err := cmd(name, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	default:
		// An error may quote what the database or the command line held.
		fmt.Fprintf(c.stderr, "agnara approvals %s: %s\n", name, printable(err.Error()))
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprint(c.stderr, "\n"+ue.usage)
		} else if hint := hintFor(err); hint != "" {
			fmt.Fprintln(c.stderr, hint)
		}
		return 1
	}
}

// hintFor says what to do about err, when there is something to say: it
// reads the error's reason, as any host program would.
func hintFor(err error) string {
	switch execution.ReasonOf(err) {
	case approval.ReasonNotFound:
		return "Run 'agnara approvals list' to see the approvals in this database."
	case approval.ReasonSelfDecision:
		return "Another person must decide it: run the command with -as set to a different approver."
	case approval.ReasonNotPending, approval.ReasonExpired:
		return "Run 'agnara approvals show ID' to see its current state."
	case approval.ReasonEvidenceRequired:
		return "Pass -evidence with how you established the effect, e.g. a read-back of the remote record."
	}
	return ""
}

// usageError is a mistake in the command line; run prints the command's
// usage after it.
type usageError struct {
	err   error
	usage string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// parse parses args for fs, allowing flags before and after the
// positional arguments, and returns the positional arguments. -h prints the
// command's help to stdout and returns flag.ErrHelp.
func (c *cli) parse(fs *flag.FlagSet, synopsis string, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var help strings.Builder
	fmt.Fprintf(&help, "usage: agnara approvals %s\n\nFlags:\n", synopsis)
	fs.SetOutput(&help)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(c.stdout, help.String())
				return nil, err
			}
			return nil, &usageError{err: err, usage: help.String()}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return pos, nil
}

// store is what the commands use of a store: the approvals, their audit
// trail and, for the inbox (serve), its sign-ins.
type store = inbox.Store

// storeFlags name the host's approval database: exactly one of them.
type storeFlags struct {
	db, postgres *string
}

func newStoreFlags(fs *flag.FlagSet) storeFlags {
	return storeFlags{
		db:       fs.String("db", "", "the host's SQLite approval database `path`; this or -postgres is required"),
		postgres: fs.String("postgres", "", "the host's PostgreSQL approval database `DSN`, migrated by the host; this or -db is required"),
	}
}

// name names the database in /readyz: "postgres" or "sqlite".
func (f storeFlags) name() string {
	if *f.postgres != "" {
		return "postgres"
	}
	return "sqlite"
}

// open opens an existing store; it never creates or migrates one, so that
// a mistyped -db or -postgres fails instead of showing an empty store.
func (f storeFlags) open(c *cli) (store, error) {
	opts := &approval.Options{Clock: c.clock}
	switch {
	case *f.db != "" && *f.postgres != "":
		return nil, errors.New("-db and -postgres: give one of them, the host's approval database")
	case *f.postgres != "":
		// OpenPostgres refuses a schema the host has not migrated, and
		// says so; this command leaves migrating to the host.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := approval.OpenPostgres(ctx, *f.postgres, opts)
		if err != nil {
			return nil, err
		}
		return s, nil
	case *f.db == "":
		return nil, errors.New("-db is required (or -postgres): the path of the host's approval database, or the DSN of its PostgreSQL database")
	}
	if _, err := os.Stat(*f.db); err != nil {
		return nil, fmt.Errorf("no approval database at %s: check -db (the host creates the database; this command does not): %w", *f.db, err)
	}
	s, err := approval.OpenSQLite(*f.db, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// where is how the synopses name the database.
const where = "-db PATH|-postgres DSN"

func (c *cli) list(name string, args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	sf := newStoreFlags(fs)
	state := fs.String("state", "", "only approvals in this `state`: "+statesList())
	limit := fs.Int("limit", 50, "at most `n` approvals; 0 for all")
	pos, err := c.parse(fs, "list "+where+" [-state STATE] [-limit N]", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %q: list takes only flags", pos[0])
	}
	if *state != "" && !validState(*state) {
		return fmt.Errorf("-state %q: want one of %s", *state, statesList())
	}
	s, err := sf.open(c)
	if err != nil {
		return err
	}
	defer s.Close()
	as, err := s.List(context.Background(), approval.Filter{State: approval.State(*state), Limit: *limit})
	if err != nil {
		return err
	}
	writeTable(c.stdout, as)
	return nil
}

func writeTable(out io.Writer, as []approval.Approval) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATE\tTOOL\tREQUESTER\tCREATED\tEXPIRES\tEFFECT")
	for _, a := range as {
		expires := "-"
		if a.State == approval.StatePending || a.State == approval.StateApproved {
			expires = stamp(a.ExpiresAt)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(a.ID), printable(string(a.State)), printable(a.Intent.Binding.Tool),
			printable(a.Intent.PrincipalID), stamp(a.CreatedAt), expires, effectColumn(a))
	}
	w.Flush()
}

// effectColumn is the receipt's effect, and a reconciled effect beside it.
func effectColumn(a approval.Approval) string {
	e := "-"
	if a.Receipt != nil {
		e = printable(string(a.Receipt.Effect))
	}
	if a.Reconciliation != nil {
		e += " (reconciled: " + printable(string(a.Reconciliation.Effect)) + ")"
	}
	return e
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func (c *cli) show(name string, args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	sf := newStoreFlags(fs)
	pos, err := c.parse(fs, "show "+where+" ID", args)
	if err != nil {
		return err
	}
	id, err := oneID(pos)
	if err != nil {
		return err
	}
	s, err := sf.open(c)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	a, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	evs, err := s.Events(ctx, id)
	if err != nil {
		return err
	}
	writeApproval(c.stdout, a, evs)
	return nil
}

func writeApproval(out io.Writer, a approval.Approval, evs []approval.Event) {
	in, b := a.Intent, a.Intent.Binding
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	// Every value below is untrusted text (the requester's, the remote
	// tool's, or whatever the database holds): row's callers pass it
	// through printable, so that no value can end a row or start a forged
	// one.
	row := func(k, v string) { fmt.Fprintf(w, "%s:\t%s\n", k, v) }
	row("ID", printable(a.ID))
	row("State", printable(string(a.State)))
	row("Tool", printable(b.Tool))
	row("Summary", orDash(printable(in.Summary)))
	row("Effect", printable(string(b.Effect)))
	row("Binding", printable(b.ID)+" @ "+printable(b.Revision))
	row("Scope", printable(b.ScopeID)+" @ "+printable(b.ScopeRevision))
	row("Requester", principal(in.PrincipalID, in.PrincipalIssuer))
	if in.Credential != "" {
		row("Acts as", actsAs(in.Credential))
	}
	row("Idempotency key", printable(in.IdempotencyKey))
	row("Created", stamp(a.CreatedAt))
	if a.State == approval.StatePending || a.State == approval.StateApproved {
		row("Expires", stamp(a.ExpiresAt))
	}
	if a.DecidedBy != "" {
		d := printable(a.DecidedBy) + " at " + stamp(a.DecidedAt)
		if a.Note != "" {
			d += " (note: " + strconv.Quote(a.Note) + ")"
		}
		row("Decided", d)
	}
	row("Claimed", stamp(a.ClaimedAt))
	if r := a.Receipt; r != nil {
		v := printable(string(r.Effect)) + " at " + stamp(r.At)
		if r.Reason != "" {
			v += ", reason " + printable(string(r.Reason))
		}
		row("Receipt", v)
	} else {
		row("Receipt", "-")
	}
	if r := a.Reconciliation; r != nil {
		row("Reconciled", fmt.Sprintf("%s by %s at %s", printable(string(r.Effect)), printable(r.By), stamp(r.At)))
		row("Evidence", printable(r.Evidence))
	}
	w.Flush()

	fmt.Fprintf(out, "\nArguments (%s):\n%s\n", printable(in.ArgumentsDigest), indent(in.Arguments))
	if a.Receipt != nil && a.Receipt.Result != nil {
		fmt.Fprintf(out, "\nResult:\n%s\n", indent(a.Receipt.Result))
	}

	fmt.Fprintln(out, "\nEvents:")
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  SEQ\tAT\tKIND\tACTOR\tDETAIL")
	for _, e := range evs {
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\n", e.Seq, stamp(e.At), printable(e.Kind), orDash(printable(e.Actor)), compactJSON(e.Detail))
	}
	w.Flush()
}

// indent pretty-prints JSON two spaces in, with every character that is
// not printable inside its strings escaped (escapeJSON); anything that is
// not JSON is printed as one printable line.
func indent(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "  ", "  "); err != nil {
		return "  " + printable(string(raw))
	}
	return "  " + escapeJSON(buf.String(), true)
}

// compactJSON is raw on one line, escaped like indent.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return printable(string(raw))
	}
	return escapeJSON(buf.String(), false)
}

func principal(id, issuer string) string {
	if issuer == "" {
		return printable(id)
	}
	return printable(id) + " (" + printable(issuer) + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// actorFlags are the flags of every command that acts as a principal.
type actorFlags struct {
	store            storeFlags
	as, issuer, note *string
}

func newActorFlags(fs *flag.FlagSet) actorFlags {
	return actorFlags{
		store:  newStoreFlags(fs),
		as:     fs.String("as", "", "act as approver `id` (required); you are trusted to be who you name"),
		issuer: fs.String("issuer", "", "the approver's identity `issuer`; give the one your identity provider uses so that deciding your own request is recognized"),
		note:   fs.String("note", "", "a `note` recorded with the decision"),
	}
}

// principal is the principal the command acts as. -as and -issuer are
// checked here, before any store is opened, by the store's own rule
// (approval.CheckIdentity), so that the command and the store cannot
// disagree about what an identity may contain.
func (f actorFlags) principal() (policy.Principal, error) {
	if *f.as == "" {
		return policy.Principal{}, errors.New("-as is required: the id of the approver you act as")
	}
	var ie *approval.IdentityError
	if err := approval.CheckIdentity(*f.as, *f.issuer); errors.As(err, &ie) {
		name, what := "-as", "your approver id"
		if ie.Field == "issuer" {
			name, what = "-issuer", "your identity provider's issuer"
		}
		return policy.Principal{}, fmt.Errorf("%s %s %s: give %s exactly as it is issued, without surrounding spaces, line breaks or control characters",
			name, strconv.Quote(ie.Value), ie.Problem, what)
	} else if err != nil {
		return policy.Principal{}, err
	}
	return policy.NewPrincipal(*f.as, []string{approval.DefaultApproverScope}).WithIssuer(*f.issuer), nil
}

func (c *cli) decide(name string, args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	af := newActorFlags(fs)
	pos, err := c.parse(fs, name+" "+where+" ID -as APPROVER [-issuer ISSUER] [-note TEXT]", args)
	if err != nil {
		return err
	}
	id, err := oneID(pos)
	if err != nil {
		return err
	}
	p, err := af.principal()
	if err != nil {
		return err
	}
	s, err := af.store.open(c)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	var a approval.Approval
	switch name {
	case "approve":
		a, err = s.Approve(ctx, id, p, *af.note)
	case "reject":
		a, err = s.Reject(ctx, id, p, *af.note)
	case "cancel":
		a, err = s.Cancel(ctx, id, p, *af.note)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s %s: %s (%s, requested by %s)\n", printable(a.ID), printable(string(a.State)), printable(a.Intent.Binding.Tool),
		orDash(printable(a.Intent.Summary)), principal(a.Intent.PrincipalID, a.Intent.PrincipalIssuer))
	if a.State == approval.StateApproved {
		fmt.Fprintf(c.stdout, "It may be dispatched until %s.\n", stamp(a.ExpiresAt))
	}
	return nil
}

func (c *cli) reconcile(name string, args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	af := newActorFlags(fs)
	effect := fs.String("effect", "", "what happened: `committed` or not_started (required)")
	evidence := fs.String("evidence", "", "how you know, independently of the dispatcher (required), e.g. a read-back of the remote record")
	pos, err := c.parse(fs, "reconcile "+where+" ID -as APPROVER [-issuer ISSUER] -effect committed|not_started -evidence TEXT", args)
	if err != nil {
		return err
	}
	id, err := oneID(pos)
	if err != nil {
		return err
	}
	if *af.note != "" {
		return errors.New("-note is not used by reconcile: put what you found in -evidence")
	}
	e := approval.EffectState(*effect)
	if e != approval.EffectCommitted && e != approval.EffectNotStarted {
		return fmt.Errorf("-effect %q: want committed or not_started", *effect)
	}
	if strings.TrimSpace(*evidence) == "" {
		return errors.New("-evidence is required: say how you established the effect, independently of the dispatcher")
	}
	p, err := af.principal()
	if err != nil {
		return err
	}
	s, err := af.store.open(c)
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := s.Reconcile(context.Background(), id, p, e, *evidence)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s reconciled: %s (recorded by %s; the receipt is unchanged)\n", printable(a.ID), printable(string(a.Reconciliation.Effect)), printable(a.Reconciliation.By))
	return nil
}

func oneID(pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return "", errors.New("missing approval ID (see 'agnara approvals list')")
	case 1:
		if printable(pos[0]) != pos[0] {
			return "", fmt.Errorf("approval ID %s is not printable text: copy the ID from 'agnara approvals list'", printable(pos[0]))
		}
		return pos[0], nil
	}
	quoted := make([]string, len(pos))
	for i, p := range pos {
		quoted[i] = printable(p)
	}
	return "", fmt.Errorf("one approval ID expected, got %d: %s", len(pos), strings.Join(quoted, " "))
}

func validState(s string) bool {
	for _, st := range approval.States() {
		if string(st) == s {
			return true
		}
	}
	return false
}

func statesList() string {
	var ss []string
	for _, st := range approval.States() {
		ss = append(ss, string(st))
	}
	return strings.Join(ss, ", ")
}

// actsAs says whose authority a write reaches its server with, from its
// approval's credential (approval.Intent.Credential).
func actsAs(credential string) string {
	switch credential {
	case "gateway":
		return "the gateway's own identity (gateway)"
	case "token_exchange":
		return "the requester's own token, exchanged for the server (token_exchange)"
	case "consent":
		return "the requester's own grant, given by signing in at the server (consent)"
	}
	return printable(credential)
}
