package gateway_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/gateway"
)

// TestCredentialsDocsConfigsParse: each config docs/gateway.md shows under
// "Credentials" is one `agnara gateway -check` accepts as written, and each
// mode it has a section for is shown in one.
func TestCredentialsDocsConfigsParse(t *testing.T) {
	for _, name := range []string{"GATEWAY_CLIENT_SECRET", "GATEWAY_WEB_SECRET", "CRM_CLIENT_SECRET", "GATEWAY_APPROVALS_DSN"} {
		t.Setenv(name, "from-the-environment")
	}
	t.Setenv("GATEWAY_CONNECTIONS_KEY", "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=")
	doc, err := os.ReadFile("../docs/gateway.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Credentials\n")
	if !ok {
		t.Fatal(`docs/gateway.md has no "## Credentials" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1)
	shown := map[string]bool{}
	for _, b := range blocks {
		cfg, err := gateway.Parse("gateway.yaml", []byte(b[1]))
		if err != nil {
			t.Errorf("a config in docs/gateway.md does not parse:\n%s\n%v", b[1], err)
			continue
		}
		for _, u := range cfg.Upstreams {
			if u.HTTP != nil {
				shown[u.HTTP.Credentials] = true
			}
		}
	}
	for _, m := range regexp.MustCompile("### .*\\(`credentials: (\\w+)`\\)").FindAllStringSubmatch(section, -1) {
		if !shown[m[1]] {
			t.Errorf("the section for credentials %s shows no config using it", m[1])
		}
	}
	if len(shown) < 3 {
		t.Errorf("configs shown for %d modes, want every mode: %v", len(shown), shown)
	}
}
