package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/peers"
	"github.com/chromedp/chromedp"
)

// chromium starts a headless Debian Chromium with its own profile, for
// one person.
func chromium(t *testing.T) context.Context {
	t.Helper()
	exe := peers.Program(t, "chromium", "run `make engines` (apt-get install chromium)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-sync", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, for as long as ctx
		t.Fatalf("starting chromium: %v", err)
	}
	bounded, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	return bounded
}

// chromiumConnects plays the person in Chromium: it opens link, signs in
// as user wherever a sign-in form shows (the gateway's issuer, then the
// upstream's authorization server), allows the connection on the
// gateway's page, and waits for "Connected".
func chromiumConnects(ctx context.Context, link, user string) error {
	step, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(step, chromedp.Navigate(link)); err != nil {
		return err
	}
	for range 6 {
		state, err := pageState(step)
		if err != nil {
			return err
		}
		switch state {
		case "login":
			err = chromedp.Do(step,
				chromedp.SendKeys(chromedp.ID("username"), user),
				chromedp.SendKeys(chromedp.ID("password"), user+"-pw"),
				chromedp.Click(chromedp.ID("submit")),
				chromedp.WaitNotPresent(chromedp.ID("password")))
		case "allow":
			err = chromedp.Do(step, chromedp.Click(chromedp.ID("allow")), chromedp.WaitNotPresent(chromedp.ID("allow")))
		case "title:Connected":
			return nil
		default:
			text, _ := chromedp.Run(step, chromedp.Text(chromedp.CSS("body")))
			return fmt.Errorf("unexpected page %q: %s", state, strings.Join(strings.Fields(text), " "))
		}
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("not connected after six pages")
}

// TestConsentSignInByURLInChromium is issue 40's floor for the sign-in by
// URL, end to end: the caller's MCP client gets the URL in a URL
// elicitation and hands it to a headless Chromium, where the person signs
// in at the real authorization server (for the gateway's pages, then for
// the upstream) and allows the connection; the call then completes once,
// as the person, at both revisions.
func TestConsentSignInByURLInChromium(t *testing.T) {
	w := newConsentWorld(t, "alice")
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			w.forget(t, "alice")
			ctx := chromium(t) // a fresh profile: no sign-in kept from the last run
			o := &opener{open: func(link string) error { return chromiumConnects(ctx, link, "alice") }}
			cs := w.connectAs(t, w.signIn(t, "agent", "alice"), protocol, o)
			before := len(w.upstream.calls())
			if text, isErr := call(t, cs, "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
				t.Fatalf("alice's call: %s", text)
			}
			if n := len(o.asked()); n != 1 {
				t.Errorf("asked %d times, want once", n)
			}
			if calls := w.upstream.calls()[before:]; len(calls) != 1 || calls[0].sub != "alice" {
				t.Errorf("the upstream saw %+v, want one call as alice", calls)
			}
		})
	}
}

// pageState waits until the page is a sign-in form ("login"), the
// gateway's consent ("allow"), or another page of the gateway ("title:"
// and its heading).
func pageState(ctx context.Context) (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			if (document.readyState !== "complete") return "";
			if (document.getElementById("username") && document.getElementById("submit")) return "login";
			if (document.getElementById("allow")) return "allow";
			const t = document.getElementById("title");
			return t ? "title:" + t.textContent : "";
		})()`))
		if err == nil && state != "" {
			return state, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no page to act on (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
