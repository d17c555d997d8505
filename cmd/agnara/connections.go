package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

// connectionStore is what `approvals connections` uses of a store: the
// grants a gateway keeps for the people it acts for (approval.Connection).
type connectionStore interface {
	ListConnections(ctx context.Context, p policy.Principal) ([]approval.Connection, error)
	DeleteConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (bool, error)
}

// connections lists one person's grants, or revokes one: the gateway's
// next call for them at that upstream, through that client, finds none
// and asks them to sign in again (docs/gateway.md, "Credentials").
func (c *cli) connections(name string, args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	sf := newStoreFlags(fs)
	principal := fs.String("principal", "", "the person's principal `id` (the subject of their token); required")
	issuer := fs.String("issuer", "", "the person's `issuer` (the gateway's auth.issuer); required")
	revoke := fs.String("revoke", "", "revoke the grant for this `upstream` instead of listing")
	client := fs.String("client", "", "with -revoke: the OAuth `client` the grant is for (the list's CLIENT column; \"-\" for any)")
	pos, err := c.parse(fs, "connections "+where+" -principal ID -issuer ISSUER [-revoke UPSTREAM -client CLIENT]", args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return fmt.Errorf("unexpected argument %q: connections takes only flags", pos[0])
	case *principal == "" || *issuer == "":
		return errors.New("-principal and -issuer are required: whose connections")
	case *revoke == "" && *client != "":
		return errors.New("-client goes with -revoke")
	case *revoke != "" && *client == "":
		return errors.New("-revoke needs -client: a grant is given per client (\"-\" for one given for any)")
	}
	s, err := sf.open(c)
	if err != nil {
		return err
	}
	defer s.Close()
	cs, ok := s.(connectionStore)
	if !ok {
		return errors.New("this approval store keeps no connections")
	}
	p := policy.NewPrincipal(*principal, nil).WithIssuer(*issuer)
	ctx := context.Background()
	if *revoke != "" {
		cl := *client
		if cl == "-" {
			cl = ""
		}
		gone, err := cs.DeleteConnection(ctx, p, *revoke, cl)
		if err != nil {
			return err
		}
		if !gone {
			return fmt.Errorf("%s has no grant for %s through %s", printable(*principal), printable(*revoke), printable(*client))
		}
		fmt.Fprintf(c.stdout, "revoked: %s no longer acts as %s through %s\n", printable(*revoke), printable(*principal), printable(*client))
		return nil
	}
	list, err := cs.ListConnections(ctx, p)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "UPSTREAM\tCLIENT\tSCOPES\tCREATED\tUPDATED")
	for _, cn := range list {
		cl := cn.ClientID
		if cl == "" {
			cl = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", printable(cn.Upstream), printable(cl), orDash(printable(strings.Join(cn.Scopes, " "))),
			stamp(cn.CreatedAt), stamp(cn.UpdatedAt))
	}
	return w.Flush()
}
