package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// The lifecycle of one remote write: asked for, approved by someone else,
// claimed exactly once, completed with an honest receipt.
func Example() {
	dir, err := os.MkdirTemp("", "approvals")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approval.OpenSQLite(filepath.Join(dir, "approvals.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()

	binding := approval.Binding{
		Tool: "gw.update_document", ID: "document-service",
		Revision: "sha256:9f2c…", // the write catalog digest
		ScopeID:  "sandbox-documents", ScopeRevision: "scope-1",
		Effect: approval.EffectWrite,
	}
	args := json.RawMessage(`{"id":42,"title":"Q3 plan"}`)
	digest, err := execution.ArgumentsDigest(args)
	if err != nil {
		log.Fatal(err)
	}
	a, err := store.Prepare(ctx, approval.Intent{
		Binding:     binding,
		PrincipalID: "alice", PrincipalIssuer: "https://idp.example",
		Arguments: args, ArgumentsDigest: digest,
		IdempotencyKey: "call-7f3a", Summary: "Update document",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("prepared:", a.State)

	alice := policy.NewPrincipal("alice", []string{"approvals:approve"}).WithIssuer("https://idp.example")
	_, err = store.Approve(ctx, a.ID, alice, "")
	fmt.Println("alice approves her own:", errors.Is(err, approval.ErrSelfApproval))

	bob := policy.NewPrincipal("bob", []string{"approvals:approve"}).WithIssuer("https://idp.example")
	a, err = store.Approve(ctx, a.ID, bob, "title checked")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bob:", a.State)

	// Just before dispatch, with the registration as it is now.
	a, err = store.Claim(ctx, a.ID, binding)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("claimed:", a.State)
	_, err = store.Claim(ctx, a.ID, binding)
	fmt.Println("claimed again:", errors.Is(err, approval.ErrAlreadyClaimed))

	// The request went out and timed out: the write may or may not have
	// happened.
	a, err = store.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_timeout"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("completed:", a.State, a.Receipt.Effect)

	// A host establishes what happened, independently, and records it.
	a, err = store.Reconcile(ctx, a.ID, bob, approval.EffectCommitted, "read back document 42: title is \"Q3 plan\"")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reconciled:", a.Reconciliation.Effect, "receipt still", a.Receipt.Effect)
	// Output:
	// prepared: pending
	// alice approves her own: true
	// bob: approved
	// claimed: claimed
	// claimed again: true
	// completed: completed unknown
	// reconciled: committed receipt still unknown
}

// Approvers who work through an MCP client get the operations as tools,
// guarded by the approver scope; approving and rejecting ask the approver's
// user to confirm.
func ExampleRegisterTools() {
	dir, err := os.MkdirTemp("", "approvals")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approval.OpenSQLite(filepath.Join(dir, "approvals.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	app := agnara.New("host", nil)
	for _, c := range approval.RegisterTools(app, store, nil) {
		o := c.Options()
		fmt.Println(c.Identity(), o.Scopes, o.Confirm != "")
	}
	// Output:
	// host.approvals_list [approvals:approve] false
	// host.approvals_show [approvals:approve] false
	// host.approvals_approve [approvals:approve] true
	// host.approvals_reject [approvals:approve] true
}

// Who counts as the requester when a decision is refused: spellings that
// look alike are one person, whatever their code points.
func ExampleSamePerson() {
	for _, approver := range []string{
		"DEVELOPER",
		"d\u0435veloper", // Cyrillic е
		"\uff44eveloper", // full-width ｄ
		"deveIoper",      // capital I for l
		"bob",
	} {
		fmt.Printf("%s: %v\n", approver, approval.SamePerson("developer", approver))
	}
	// Output:
	// DEVELOPER: true
	// dеveloper: true
	// ｄeveloper: true
	// deveIoper: true
	// bob: false
}

// Reading a long list page by page: each page starts after the last
// approval of the one before (Filter.Before), so approvals recorded
// meanwhile shift nothing.
func ExampleFilter_pages() {
	dir, err := os.MkdirTemp("", "approvals")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approval.OpenSQLite(filepath.Join(dir, "approvals.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	for i := range 5 {
		args := json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		digest, err := execution.ArgumentsDigest(args)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := store.Prepare(ctx, approval.Intent{
			Binding: approval.Binding{Tool: "gw.update_document", ID: "document-service", Revision: "sha256:9f2c…",
				ScopeID: "sandbox-documents", ScopeRevision: "scope-1", Effect: approval.EffectWrite},
			PrincipalID: "alice", Arguments: args, ArgumentsDigest: digest,
			IdempotencyKey: fmt.Sprint("call-", i), Summary: "Update document",
			Description: "Sets a document's title.", Server: "documents",
		}); err != nil {
			log.Fatal(err)
		}
	}
	f := approval.Filter{Limit: 2}
	for page := 1; ; page++ {
		as, err := store.List(ctx, f)
		if err != nil {
			log.Fatal(err)
		}
		var ns []string
		for _, a := range as {
			ns = append(ns, string(a.Intent.Arguments))
		}
		fmt.Println("page", page, ns)
		if len(as) < f.Limit {
			break
		}
		f.Before = as[len(as)-1].ID
	}
	// Output:
	// page 1 [{"n":4} {"n":3}]
	// page 2 [{"n":2} {"n":1}]
	// page 3 [{"n":0}]
}
