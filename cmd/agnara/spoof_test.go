package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// TestActorFlagsAreChecked: -as and -issuer are refused, saying what to
// fix, before any database is opened (the path below does not exist, so an
// error about it would mean the check came too late).
func TestActorFlagsAreChecked(t *testing.T) {
	missing := t.TempDir() + "/missing.db"
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"trailing space", []string{"-as", "developer "}, `-as "developer " ends with a space`},
		{"leading space", []string{"-as", " developer"}, `-as " developer" starts with a space`},
		{"trailing newline", []string{"-as", "developer\n"}, `-as "developer\n" contains the control character U+000A`},
		{"ansi escape", []string{"-as", "\x1b[1Abob"}, `-as "\x1b[1Abob" contains the control character U+001B`},
		{"zero width space", []string{"-as", "developer\u200b"}, `-as "developer\u200b" contains the invisible`},
		{"issuer newline", []string{"-as", "bob", "-issuer", "https://idp.example\n"}, `-issuer "https://idp.example\n" contains the control character`},
		{"issuer space", []string{"-as", "bob", "-issuer", "https://idp.example "}, `-issuer "https://idp.example " ends with a space`},
	} {
		for _, cmd := range []string{"approve", "reject", "cancel", "reconcile"} {
			t.Run(tt.name+"/"+cmd, func(t *testing.T) {
				args := append([]string{"approvals", cmd, "apv_x", "-db", missing}, tt.args...)
				if cmd == "reconcile" {
					args = append(args, "-effect", "committed", "-evidence", "read back")
				}
				code, out, errOut := run(now, args...)
				if code != 1 || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "without surrounding spaces, line breaks or control characters") {
					t.Fatalf("exit %d, stderr:\n%s\nwant it to contain %q and what to fix", code, errOut, tt.want)
				}
				if strings.Contains(errOut, "no approval database") || out != "" {
					t.Fatalf("the database was opened before the flags were checked: %s%s", out, errOut)
				}
				if strings.ContainsAny(errOut[:len(errOut)-1], "\x1b\u200b") || strings.Count(errOut, "\n") != 1 {
					t.Fatalf("the error message is not one escaped line: %q", errOut)
				}
			})
		}
	}
}

// TestSelfApprovalSpellings is issue 16's reproduction through the command
// line: the requester "developer" from https://idp.example, running the
// command as host staff, cannot decide its own request under another
// spelling or issuer, look-alike letters included (issue 28).
func TestSelfApprovalSpellings(t *testing.T) {
	d := sqliteDB(t)
	s := d.open(t, &approval.Options{Clock: clockAt(now)})
	a, err := s.Prepare(context.Background(), intent(t, "k1", "gw.update_document", "developer", `{"id":1}`))
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, as := range [][]string{
		{"-as", "developer", "-issuer", "https://idp.example"},
		{"-as", "developer"}, // -issuer defaults to none: the same person
		{"-as", "Developer"},
		{"-as", "DEVELOPER", "-issuer", "https://idp.example"},
		{"-as", "developer", "-issuer", "other"},
		{"-as", "developer", "-issuer", "https://idp.example/"},
		// Look-alike spellings (issue 28).
		{"-as", "d\u0435veloper"}, // Cyrillic е
		{"-as", "devel\u043eper"}, // Cyrillic о
		{"-as", "develo\u0440er"}, // Cyrillic р
		{"-as", "devel\u03bfper"}, // Greek ο
		{"-as", "\uff44eveloper"}, // full-width ｄ
		{"-as", "ｄｅｖｅｌｏｐｅｒ"},      // all full-width
		{"-as", "\U0001d41d\U0001d41e\U0001d42f\U0001d41e\U0001d425\U0001d428\U0001d429\U0001d41e\U0001d42b"}, // mathematical bold
		{"-as", "deve\u0301loper"}, // a combining accent added
		{"-as", "deveIoper"},       // capital I for l
		{"-as", "deve1oper"},       // digit 1 for l
	} {
		for _, cmd := range []string{"approve", "reject"} {
			code, out, errOut := run(now, append([]string{"approvals", cmd, a.ID, d.flag, d.loc}, as...)...)
			if code != 1 || !strings.Contains(errOut, "cannot decide their own") || !strings.Contains(errOut, "different approver") {
				t.Errorf("%s %q = %d: %s%s", cmd, as, code, out, errOut)
			}
		}
	}
	code, out, errOut := run(now, "approvals", "approve", a.ID, d.flag, d.loc, "-as", "bob")
	if code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("approve by bob = %d: %s%s", code, out, errOut)
	}
}

// TestOutputIsEscaped: untrusted fields holding newlines, tabs, ANSI
// escapes, C1 controls and bidirectional overrides are printed escaped, so
// that list and show print exactly their own rows. The requester, tool and
// evidence are written straight into the database: Prepare refuses such a
// requester now, but a database written before, or by hand, may hold one.
func TestOutputIsEscaped(t *testing.T) {
	d := sqliteDB(t)
	const (
		summary  = "Update document\x1b[2K\x1b[1A\x1b[32mall clear\x1b[0m"
		note     = "fine\nDecided:          root at 2026-12-01T09:00:00Z"
		evidence = "checked\r\nReconciled:       not_started by root"
		fakeRow  = "\napv_fakefakefakefakefake  approved   gw.read  root"
		args     = `{"title":"Q3 plan\u009b2K\u202egnp.exe"}`
	)
	s := d.open(t, &approval.Options{Clock: clockAt(now)})
	in := intent(t, "k1", "gw.update_document", "alice", args)
	in.Summary = summary
	// The arguments carry a raw C1 CSI and a right-to-left override inside
	// a JSON string, which JSON allows.
	in.Arguments = json.RawMessage("{\"title\":\"Q3 plan\u009b2K\u202egnp.exe\"}")
	in.ArgumentsDigest, _ = execution.ArgumentsDigest(in.Arguments)
	ctx := context.Background()
	a, err := s.Prepare(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve(ctx, a.ID, bob, note); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, a.ID, binding("gw.update_document")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectUnknown}); err != nil {
		t.Fatal(err)
	}
	carol := policy.NewPrincipal("carol", []string{approval.DefaultApproverScope})
	if _, err := s.Reconcile(ctx, a.ID, carol, approval.EffectCommitted, evidence); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", d.loc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE approvals SET principal_id = ?, tool = ?", "alice"+fakeRow, "gw.update_document\tpending"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	check := func(t *testing.T, out string, lines int, wants ...string) {
		t.Helper()
		for _, bad := range []string{"\x1b", "\u009b", "\u202e", "\r", "\t"} {
			if strings.Contains(out, bad) {
				t.Errorf("output holds %q raw:\n%s", bad, out)
			}
		}
		if n := strings.Count(out, "\n"); n != lines {
			t.Errorf("output has %d lines, want %d:\n%s", n, lines, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "apv_fake") || strings.HasPrefix(l, "Decided:          root") || strings.HasPrefix(l, "Reconciled:       not_started") {
				t.Errorf("a forged line: %q", l)
			}
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %s:\n%s", w, out)
			}
		}
	}
	at := now.Add(time.Minute)
	t.Run("list", func(t *testing.T) {
		code, out, errOut := run(at, "approvals", "list", d.flag, d.loc)
		if code != 0 {
			t.Fatalf("list = %d: %s", code, errOut)
		}
		check(t, out, 2, `"alice\napv_fakefakefakefakefake  approved   gw.read  root"`, `"gw.update_document\tpending"`)
	})
	t.Run("show", func(t *testing.T) {
		code, out, errOut := run(at, "approvals", "show", a.ID, d.flag, d.loc)
		if code != 0 {
			t.Fatalf("show = %d: %s", code, errOut)
		}
		check(t, out, 28,
			`Summary:          "Update document\x1b[2K\x1b[1A\x1b[32mall clear\x1b[0m"`,
			`(note: "fine\nDecided:          root at 2026-12-01T09:00:00Z")`,
			`Evidence:         "checked\r\nReconciled:       not_started by root"`,
			`"title": "Q3 plan\u009b2K\u202egnp.exe"`,
			`Requester:        "alice\napv_fakefakefakefakefake  approved   gw.read  root" (https://idp.example)`,
		)
	})
	t.Run("an id with a newline", func(t *testing.T) {
		code, out, errOut := run(at, "approvals", "show", a.ID+"\nState: approved", d.flag, d.loc)
		if code != 1 || out != "" || !strings.Contains(errOut, `approval ID "`+a.ID+`\nState: approved" is not printable`) || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("show = %d: %q %q", code, out, errOut)
		}
	})
}
