package approval_test

import (
	"cmp"
	"context"
	"errors"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

func TestCheckIdentity(t *testing.T) {
	tests := []struct {
		name, id, issuer string
		field            string // "" when valid
	}{
		{"plain", "developer", "https://idp.example", ""},
		{"anonymous", "", "", ""},
		{"inner space", "Jane Doe", "", ""},
		{"unicode letters", "développeur", "https://idp.example/tenant/ü", ""},
		{"trailing space", "developer ", "", "id"},
		{"leading space", " developer", "", "id"},
		{"trailing newline", "developer\n", "", "id"},
		{"newline inside", "dev\neloper", "", "id"},
		{"tab", "developer\t", "", "id"},
		{"carriage return", "developer\r", "", "id"},
		{"ansi escape", "\x1b[2Kbob", "", "id"},
		{"C1 control CSI", "bob\u009b2K", "", "id"},
		{"NUL", "bob\x00", "", "id"},
		{"DEL", "bob\x7f", "", "id"},
		{"no-break space", "developer\u00a0", "", "id"},
		{"ideographic space inside", "dev\u3000eloper", "", "id"},
		{"zero width space", "developer\u200b", "", "id"},
		{"right-to-left override", "\u202erepoleved", "", "id"},
		{"line separator", "dev\u2028eloper", "", "id"},
		{"byte order mark", "\ufeffdeveloper", "", "id"},
		{"invalid UTF-8", "dev\xffeloper", "", "id"},
		{"issuer with trailing newline", "bob", "https://idp.example\n", "issuer"},
		{"issuer with surrounding space", "bob", " https://idp.example", "issuer"},
		{"issuer with ansi escape", "bob", "https://idp.example\x1b[0m", "issuer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := approval.CheckIdentity(tt.id, tt.issuer)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("CheckIdentity(%q, %q) = %v, want nil", tt.id, tt.issuer, err)
				}
				return
			}
			var ie *approval.IdentityError
			if !errors.As(err, &ie) || !errors.Is(err, approval.ErrInvalid) {
				t.Fatalf("CheckIdentity(%q, %q) = %v, want an *IdentityError wrapping ErrInvalid", tt.id, tt.issuer, err)
			}
			if ie.Field != tt.field || ie.Problem == "" {
				t.Errorf("field %q problem %q, want field %q and a problem", ie.Field, ie.Problem, tt.field)
			}
		})
	}
}

// testSelfApprovalSpellings is issue 16's reproduction: the requester
// "developer" from https://idp.example, holding the approver scope, tries
// to decide its own request under other spellings of its name.
func testSelfApprovalSpellings(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.fresh(t, newClock())
	in := testIntent(t, "spellings", `{"id":1}`)
	in.PrincipalID = "developer"
	a, err := s.Prepare(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	as := func(id, issuer string) policy.Principal {
		return policy.NewPrincipal(id, []string{approval.DefaultApproverScope}).WithIssuer(issuer)
	}
	const idp = "https://idp.example"
	tests := []struct {
		name      string
		requester string // "" for developer
		p         policy.Principal
		want      error
	}{
		{"exact", "", as("developer", idp), approval.ErrSelfApproval},
		{"trailing space", "", as("developer ", idp), approval.ErrInvalid},
		{"leading space", "", as(" developer", idp), approval.ErrInvalid},
		{"capitalized", "", as("Developer", idp), approval.ErrSelfApproval},
		{"upper case", "", as("DEVELOPER", idp), approval.ErrSelfApproval},
		{"trailing newline", "", as("developer\n", idp), approval.ErrInvalid},
		{"zero width space", "", as("developer\u200b", idp), approval.ErrInvalid},
		{"another issuer", "", as("developer", "https://other.example"), approval.ErrSelfApproval},
		{"no issuer, as the command line defaults", "", as("developer", ""), approval.ErrSelfApproval},
		{"issuer with a trailing slash", "", as("developer", idp+"/"), approval.ErrSelfApproval},
		{"issuer with a newline", "", as("bob", idp+"\n"), approval.ErrInvalid},
		// Look-alike spellings (issue 28): each is the requester.
		{"Cyrillic е", "", as("d\u0435veloper", idp), approval.ErrSelfApproval},
		{"Cyrillic о", "", as("devel\u043eper", idp), approval.ErrSelfApproval},
		{"Cyrillic р", "", as("develo\u0440er", idp), approval.ErrSelfApproval},
		{"Cyrillic а", "carla", as("c\u0430rla", idp), approval.ErrSelfApproval},
		{"Cyrillic с", "carla", as("\u0441arla", idp), approval.ErrSelfApproval},
		{"Greek ο", "", as("devel\u03bfper", idp), approval.ErrSelfApproval},
		{"full-width ｄ", "", as("\uff44eveloper", idp), approval.ErrSelfApproval},
		{"all full-width", "", as("ｄｅｖｅｌｏｐｅｒ", idp), approval.ErrSelfApproval},
		{"ligature ﬁ", "fiona", as("\ufb01ona", idp), approval.ErrSelfApproval},
		{"combining é for precomposed", "jos\u00e9", as("jose\u0301", idp), approval.ErrSelfApproval},
		{"precomposed é for combining", "jose\u0301", as("jos\u00e9", idp), approval.ErrSelfApproval},
		{"Kelvin sign", "kate", as("\u212aate", idp), approval.ErrSelfApproval},
		{"mathematical bold", "", as("\U0001d41d\U0001d41e\U0001d42f\U0001d41e\U0001d425\U0001d428\U0001d429\U0001d41e\U0001d42b", idp), approval.ErrSelfApproval},
		{"capital I for l", "", as("deveIoper", idp), approval.ErrSelfApproval},
		{"a combining grapheme joiner added", "", as("devel\u034foper", idp), approval.ErrSelfApproval},
	}
	for _, tt := range tests {
		for verb, decide := range map[string]func(context.Context, string, policy.Principal, string) (approval.Approval, error){
			"approve": s.Approve, "reject": s.Reject,
		} {
			t.Run(tt.name+"/"+verb, func(t *testing.T) {
				// A fresh approval each, so that every spelling is tried
				// on a pending one.
				in := testIntent(t, tt.name+"/"+verb, `{"id":1}`)
				in.PrincipalID = cmp.Or(tt.requester, "developer")
				a, err := s.Prepare(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				_, err = decide(ctx, a.ID, tt.p, "")
				wantErr(t, err, tt.want)
				mustState(t, s, a.ID, approval.StatePending)
			})
		}
	}

	t.Run("cancel and reconcile refuse invalid identities", func(t *testing.T) {
		_, err := s.Cancel(ctx, a.ID, as("bob\n", idp), "")
		wantErr(t, err, approval.ErrInvalid)
		_, err = s.Reconcile(ctx, a.ID, as("bob", " "+idp), approval.EffectCommitted, "read back")
		wantErr(t, err, approval.ErrInvalid)
		mustState(t, s, a.ID, approval.StatePending)
	})
	t.Run("only the exact requester cancels without the approver scope", func(t *testing.T) {
		for _, p := range []policy.Principal{
			policy.NewPrincipal("Developer", nil).WithIssuer(idp),
			policy.NewPrincipal("developer", nil).WithIssuer("https://other.example"),
			policy.NewPrincipal("developer", nil),
		} {
			_, err := s.Cancel(ctx, a.ID, p, "")
			wantErr(t, err, approval.ErrNotAuthorized)
		}
		mustState(t, s, a.ID, approval.StatePending)
	})

	// Another person still decides it, and the record keeps their id as
	// given.
	got, err := s.Approve(ctx, a.ID, as("Bob", idp), "checked")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.StateApproved || got.DecidedBy != "Bob" {
		t.Fatalf("approved = %s by %q, want approved by Bob", got.State, got.DecidedBy)
	}
}

func testPrepareRefusesInvalidIdentities(t *testing.T, b backend) {
	s := b.fresh(t, newClock())
	for _, c := range []struct{ id, issuer string }{
		{"developer ", "https://idp.example"},
		{"developer\n", "https://idp.example"},
		{"dev\x1b[0meloper", "https://idp.example"},
		{"developer", "https://idp.example\n"},
		{"developer", "https://idp.example "},
	} {
		in := testIntent(t, "k", `{"id":1}`)
		in.PrincipalID, in.PrincipalIssuer = c.id, c.issuer
		_, err := s.Prepare(context.Background(), in)
		var ie *approval.IdentityError
		if !errors.As(err, &ie) || !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("Prepare by %q (%q) = %v, want an identity error wrapping ErrInvalid", c.id, c.issuer, err)
		}
	}
	as, err := s.List(context.Background(), approval.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 0 {
		t.Fatalf("%d approvals recorded, want none", len(as))
	}
}
