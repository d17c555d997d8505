package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/requeststate"
)

const keysUsage = `usage: agnara keys <command> [flags]

Commands:
  generate  write a new request-state key file:  generate -o FILE [-force]
  stage     add the next key, which opens but does not seal yet:  stage FILE
  rotate    make the staged (or a new) key current:  rotate FILE [-keep 1h]
  list      show a key file's key ids (never the secrets):  list FILE

Every instance of a server that loads the same key file (-state-keys FILE)
opens the request states the others sealed. See docs/scaling.md.
`

// keys runs 'agnara keys' with args (after "keys") and returns the exit code.
func (c *cli) keys(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, "agnara keys: missing command\n\n"+keysUsage)
		return 1
	}
	var err error
	switch name := args[0]; name {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, keysUsage)
		return 0
	case "generate":
		err = c.keysGenerate(args[1:])
	case "stage":
		err = c.keysStage(args[1:])
	case "rotate":
		err = c.keysRotate(args[1:])
	case "list":
		err = c.keysList(args[1:])
	default:
		fmt.Fprintf(c.stderr, "agnara keys: unknown command %q\n\n%s", name, keysUsage)
		return 1
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintf(c.stderr, "agnara keys %s: %v\n", args[0], err)
		return 1
	}
}

// keysFlags parses args for fs, flags before or after the one optional
// positional argument, which it returns ("" when absent).
func (c *cli) keysFlags(flags *flag.FlagSet, synopsis string, args []string) (string, error) {
	var help strings.Builder
	fmt.Fprintf(&help, "usage: agnara keys %s\n\nFlags:\n", synopsis)
	flags.SetOutput(&help)
	flags.PrintDefaults()
	flags.SetOutput(io.Discard)
	var pos []string
	for {
		if err := flags.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(c.stdout, help.String())
			}
			return "", err
		}
		if flags.NArg() == 0 {
			break
		}
		pos = append(pos, flags.Arg(0))
		args = flags.Args()[1:]
	}
	if len(pos) > 1 {
		return "", fmt.Errorf("unexpected argument %q\n\n%s", pos[1], help.String())
	}
	if len(pos) == 1 {
		return pos[0], nil
	}
	return "", nil
}

func (c *cli) now() time.Time {
	if c.clock != nil {
		return c.clock()
	}
	return time.Now()
}

func (c *cli) keysGenerate(args []string) error {
	flags := flag.NewFlagSet("generate", flag.ContinueOnError)
	out := flags.String("o", "", "key file to write (required; written with mode 0600)")
	force := flags.Bool("force", false, "replace an existing file (every state sealed under its keys stops opening)")
	pos, err := c.keysFlags(flags, "generate -o FILE [-force]", args)
	if err != nil {
		return err
	}
	if pos != "" {
		return fmt.Errorf("unexpected argument %q: give the file with -o", pos)
	}
	if *out == "" {
		return errors.New("-o FILE is required: where to write the key file")
	}
	if _, err := os.Stat(*out); err == nil && !*force {
		return fmt.Errorf("%s exists: to add a key run 'agnara keys rotate %s'; to replace it (states sealed under it stop opening) add -force", *out, *out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	keys, err := requeststate.NewKeyFile(c.now())
	if err != nil {
		return err
	}
	if err := requeststate.WriteKeyFile(*out, keys); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "wrote %s: current key %s\n", *out, keys[0].ID)
	return nil
}

func (c *cli) keysStage(args []string) error {
	flags := flag.NewFlagSet("stage", flag.ContinueOnError)
	path, err := c.keysFlags(flags, "stage FILE", args)
	if err != nil {
		return err
	}
	if path == "" {
		return errors.New("the key file is required: agnara keys stage FILE")
	}
	keys, err := requeststate.ReadKeyFile(path)
	if err != nil {
		return err
	}
	staged, err := requeststate.StageKeyFile(keys, c.now())
	if err != nil {
		return err
	}
	if err := requeststate.WriteKeyFile(path, staged); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "staged %s in %s: it opens but does not seal yet\n", staged[1].ID, path)
	fmt.Fprintf(c.stdout, "Deploy the file to every instance, then run 'agnara keys rotate %s' and deploy again.\n", path)
	return nil
}

func (c *cli) keysRotate(args []string) error {
	flags := flag.NewFlagSet("rotate", flag.ContinueOnError)
	keep := flags.Duration("keep", requeststate.MaxTTL, "keep retired keys this long after they stop sealing: at least the servers' state TTL")
	path, err := c.keysFlags(flags, "rotate FILE [-keep 1h]", args)
	if err != nil {
		return err
	}
	if path == "" {
		return errors.New("the key file to rotate is required: agnara keys rotate FILE")
	}
	keys, err := requeststate.ReadKeyFile(path)
	if err != nil {
		return err
	}
	rotated, err := requeststate.RotateKeyFile(keys, c.now(), *keep)
	if err != nil {
		return err
	}
	if err := requeststate.WriteKeyFile(path, rotated); err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, k := range rotated {
		kept[k.ID] = true
	}
	fmt.Fprintf(c.stdout, "rotated %s: current key %s", path, rotated[0].ID)
	for _, k := range keys {
		if !kept[k.ID] {
			fmt.Fprintf(c.stdout, "; dropped %s", k.ID)
		}
	}
	fmt.Fprintln(c.stdout, "\nRestart or redeploy every instance with the new file; see docs/scaling.md.")
	return nil
}

func (c *cli) keysList(args []string) error {
	flags := flag.NewFlagSet("list", flag.ContinueOnError)
	path, err := c.keysFlags(flags, "list FILE", args)
	if err != nil {
		return err
	}
	if path == "" {
		return errors.New("the key file is required: agnara keys list FILE")
	}
	keys, err := requeststate.ReadKeyFile(path)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tROLE\tRETIRED")
	for i, k := range keys {
		role, retired := "opens", "-"
		switch {
		case i == 0:
			role = "seals, opens"
		case k.Staged:
			role = "opens (staged)"
		}
		if !k.Retired.IsZero() {
			retired = k.Retired.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", k.ID, role, retired)
	}
	return w.Flush()
}
