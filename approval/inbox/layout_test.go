package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/internal/canonjson"
	"github.com/agnara-go/agnara/policy"
	"github.com/chromedp/chromedp"
)

// prepareTool records a pending approval for a tool with a description
// on the server "notes", as the gateway prepares one: one for each
// requester, summary and arguments.
func prepareTool(t *testing.T, s approval.Store, requester, summary, args string) approval.Approval {
	t.Helper()
	digest, err := canonjson.Digest([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Prepare(context.Background(), approval.Intent{
		Binding: approval.Binding{Tool: "gateway.notes_create", ID: "notes", Revision: "sha256:9f2c41d07be3a5c1e8f0d2b4a6c8e0f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3",
			ScopeID: "notes", ScopeRevision: "1", Effect: approval.EffectWrite},
		PrincipalID: requester, Arguments: json.RawMessage(args), ArgumentsDigest: digest,
		IdempotencyKey: "key-" + summary + requester + digest, Summary: summary,
		Description: "Create multiple new entities in the knowledge graph, each with a name, a type and observations.",
		Server:      "notes",
		Credential:  "token_exchange",
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// argumentsOf returns a JSON object that the inbox pretty-prints as n
// lines (n > 5): a name and n-5 observations.
func argumentsOf(n int) string {
	obs := make([]string, n-5)
	for i := range obs {
		obs[i] = fmt.Sprintf("observation %d of what Ada wrote", i+1)
	}
	b, err := json.Marshal(map[string]any{"name": "Ada Lovelace", "observations": obs})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// decisionOnScreen reports, in the page, what keeps the decision buttons
// from being wholly inside the viewport without scrolling: "" when they
// all are.
const decisionOnScreen = `(() => {
	const out = [];
	for (const id of ["approve", "reject", "cancel"]) {
		const e = document.getElementById(id);
		if (!e) { out.push(id + " is missing"); continue; }
		const r = e.getBoundingClientRect();
		if (r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth)
			out.push(id + " at " + Math.round(r.left) + "," + Math.round(r.top) + "–" + Math.round(r.right) + "," + Math.round(r.bottom) + " of " + window.innerWidth + "×" + window.innerHeight);
	}
	if (window.scrollY !== 0) out.push("the page is scrolled by " + window.scrollY);
	return out.join("; ");
})()`

// TestInboxPagesFitTheScreen looks at every page of the inbox in Chromium
// at 1280×900 and at 390×844 (a phone): on a pending approval with a
// 10-line and with a 200-line argument, Approve, Reject and Cancel are on
// screen without scrolling; no page scrolls sideways; the history reads
// as sentences, the raw records folded away. It saves each page's
// screenshot (docs/images with make screenshots).
func TestInboxPagesFitTheScreen(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	dave := policy.NewPrincipal("dave", []string{approval.DefaultApproverScope})

	// The history: an approval decided, dispatched, with an unknown
	// effect, and recorded; others rejected and canceled.
	done := prepareTool(t, s, "bob", "Create notes", `{"entities":[{"name":"Grace Hopper","entityType":"person","observations":["wrote the first compiler"]}]}`)
	if _, err := s.Approve(ctx, done.ID, dave, "Checked with Grace."); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, done.ID, done.Intent.Binding); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(ctx, done.ID, approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_timeout"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reconcile(ctx, done.ID, dave, approval.EffectCommitted, "read back the graph: Grace Hopper is there"); err != nil {
		t.Fatal(err)
	}
	rejected := prepareTool(t, s, "carol", "Delete notes", `{"entityNames":["Alan Turing","Edsger Dijkstra"]}`)
	if _, err := s.Reject(ctx, rejected.ID, dave, "Not these."); err != nil {
		t.Fatal(err)
	}
	canceled := prepareTool(t, s, "bob", "Rename a note", `{"from":"Hoper","to":"Hopper"}`)
	if _, err := s.Cancel(ctx, canceled.ID, dave, "Asked twice."); err != nil {
		t.Fatal(err)
	}
	approved := prepareTool(t, s, "carol", "Add observations", `{"observations":[{"entityName":"Ada Lovelace","contents":["translated Menabrea"]}]}`)
	if _, err := s.Approve(ctx, approved.ID, dave, ""); err != nil {
		t.Fatal(err)
	}
	ten := prepareTool(t, s, "bob", "Create ten notes", argumentsOf(10))
	long := prepareTool(t, s, "erin", "Create many notes", argumentsOf(200))

	issuer := devIssuer(t, testClient, testSecret)
	_, base, _ := serveSignInInbox(t, s, issuer, "", false)
	_, dev := serveInbox(t, s, inbox.Options{DevApprover: "alice"}) // with its banner above everything
	alice := browser(t)
	signIn(t, alice, base+"/", "alice")
	dir := screenshots(t)

	for _, size := range []struct {
		w, h int64
		name string
	}{{1280, 900, "1280"}, {390, 844, "390"}} {
		if err := chromedp.Do(alice, chromedp.EmulateViewport(size.w, size.h)); err != nil {
			t.Fatal(err)
		}
		visitAt := func(base, path, ready string) {
			t.Helper()
			if err := settle(func() error {
				step, cancel := context.WithTimeout(alice, 10*time.Second)
				defer cancel()
				return chromedp.Do(step, chromedp.Navigate(base+path), chromedp.WaitVisible(ready))
			}); err != nil {
				t.Fatalf("%s at %s px: %v\n%s", path, size.name, err, where(alice))
			}
			sideways, err := chromedp.Run(alice, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
			if err != nil || sideways {
				t.Errorf("%s scrolls sideways at %s px (%v)", path, size.name, err)
			}
		}
		visit := func(path, ready string) { t.Helper(); visitAt(base, path, ready) }

		visit("/", "#pending")
		shootScreen(t, alice, filepath.Join(dir, "inbox-"+size.name+".png"))
		for _, tc := range []struct {
			what  string
			a     approval.Approval
			lines int
			shot  string
		}{{"a 10-line argument", ten, 10, ""}, {"a 200-line argument", long, 200, "approval-" + size.name + ".png"}} {
			visit("/approvals/"+tc.a.ID, "#approve")
			if got, n := text(t, alice, "#arguments"), tc.lines; strings.Count(got, "\n")+1 != n {
				t.Fatalf("the arguments show %d lines, want %d", strings.Count(got, "\n")+1, n)
			}
			off, err := chromedp.Run(alice, chromedp.Evaluate[string](decisionOnScreen))
			if err != nil || off != "" {
				t.Errorf("%s at %s×%d: the decision is not on screen without scrolling: %s %v", tc.what, size.name, size.h, off, err)
			}
			if tc.shot != "" {
				shootScreen(t, alice, filepath.Join(dir, tc.shot))
			}
		}

		// In development mode its banner comes first, and the decision
		// still fits.
		visitAt(dev, "/approvals/"+long.ID, "#dev-banner")
		if off, err := chromedp.Run(alice, chromedp.Evaluate[string](decisionOnScreen)); err != nil || off != "" {
			t.Errorf("development mode at %s×%d: the decision is not on screen without scrolling: %s %v", size.name, size.h, off, err)
		}

		// Approved: the page says plainly that the agent must call again,
		// and Cancel is on screen.
		visit("/approvals/"+approved.ID, "#next-step")
		if got := text(t, alice, "#next-step"); !strings.Contains(got, "Nothing has run yet") || !strings.Contains(got, "must make the same call again") {
			t.Errorf("the approved page says %q", got)
		}
		shootScreen(t, alice, filepath.Join(dir, "approved-"+size.name+".png"))

		// The history reads as sentences; the raw records stay folded.
		visit("/approvals/"+done.ID, "#events")
		sentences, err := chromedp.Run(alice, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events .sentence")].map(e => e.innerText)`))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"bob's agent asked to run gateway.notes_create", "dave approved it", "took it to run", "whether it took effect is unknown (mcp_timeout)", "dave recorded that it did take effect"}
		if len(sentences) != len(want) {
			t.Fatalf("history %q, want %d sentences", sentences, len(want))
		}
		for i, w := range want {
			if !strings.Contains(sentences[i], w) || strings.ContainsAny(sentences[i], "{}") {
				t.Errorf("history line %d reads %q, want a sentence with %q", i+1, sentences[i], w)
			}
		}
		open, err := chromedp.Run(alice, chromedp.Evaluate[int](`document.querySelectorAll("#events details[open], #binding[open]").length`))
		if err != nil || open != 0 {
			t.Errorf("%d raw records are unfolded (%v)", open, err)
		}
		if got := text(t, alice, "#description"); !strings.Contains(got, "knowledge graph") {
			t.Errorf("the tool's description reads %q", got)
		}
		if got := text(t, alice, "#server"); got != "notes" {
			t.Errorf("the server reads %q", got)
		}
		if got := text(t, alice, "#credential"); got != "the requester's own token, exchanged for this server" {
			t.Errorf("whose authority the write goes with reads %q", got)
		}
		shootPage(t, alice, filepath.Join(dir, "history-"+size.name+".png"))

		visit("/signed-out", "h1")
		shootScreen(t, alice, filepath.Join(dir, "signedout-"+size.name+".png"))
	}
	if err := chromedp.Do(alice, chromedp.EmulateReset()); err != nil {
		t.Fatal(err)
	}
}

// shootScreen saves what is on screen, as a person sees it before
// scrolling.
func shootScreen(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// shootPage saves the whole page.
func shootPage(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
