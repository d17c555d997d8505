package inbox

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

// connectionStore is what the connections page reads and changes: the
// grants a gateway keeps for the people it acts for at third parties
// (approval.Connection). The stores of approval.OpenSQLite and
// OpenPostgres keep them; a store without them has no such page.
type connectionStore interface {
	ListConnections(ctx context.Context, p policy.Principal) ([]approval.Connection, error)
	DeleteConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (bool, error)
}

// connections is the signed-in person's own grants, and nobody else's:
// where the gateway acts for them (credentials "consent", docs/gateway.md),
// each with a button that revokes it.
func (in *Inbox) connections(w http.ResponseWriter, r *http.Request) {
	s := in.approver(w, r)
	if s == nil {
		return
	}
	cs, ok := in.store.(connectionStore)
	if !ok {
		in.fail(w, r, s, http.StatusNotFound, "This approval store keeps no connections.")
		return
	}
	list, err := cs.ListConnections(r.Context(), owner(s))
	if err != nil {
		in.unavailable(w, r, s, err)
		return
	}
	p := in.base(s, "Your connections")
	p.Connections = list
	p.Flash = flashFor(r.URL.Query().Get("done"))
	in.render(w, http.StatusOK, "connections.html", p)
}

// revokeConnection forgets one of the signed-in person's grants: the
// gateway's next call for them there finds none, on every instance.
func (in *Inbox) revokeConnection(w http.ResponseWriter, r *http.Request) {
	s := in.post(w, r)
	if s == nil {
		return
	}
	cs, ok := in.store.(connectionStore)
	if !ok {
		in.fail(w, r, s, http.StatusNotFound, "This approval store keeps no connections.")
		return
	}
	upstream, client := r.PostFormValue("upstream"), r.PostFormValue("client")
	gone, err := cs.DeleteConnection(r.Context(), owner(s), upstream, client)
	if err != nil {
		in.unavailable(w, r, s, err)
		return
	}
	in.opts.Logger.Info("inbox: a connection was revoked", slog.String("principal", s.approver.ID()),
		slog.String("upstream", upstream), slog.String("client", client), slog.Bool("was_there", gone))
	http.Redirect(w, r, "/connections?done=revoked", http.StatusSeeOther)
}

// owner is whose connections the session may see: the signed-in person,
// by id and issuer.
func owner(s *session) policy.Principal {
	return policy.NewPrincipal(s.approver.ID(), nil).WithIssuer(s.approver.Issuer())
}
