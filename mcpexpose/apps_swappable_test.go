package mcpexpose_test

import (
	"context"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A swappable server built before it has a view (a gateway, whose
// upstreams are imported after its handler is built) declares the
// extension all the same: a client learns the capabilities at initialize
// only, and a swap may give it views, which it then serves.
func TestSwappableServerDeclaresTheUIExtension(t *testing.T) {
	app := agnara.New("shop", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "cart", Description: "The cart."}), nil)
	plain, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(plain, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Swappable: true}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for _, era := range eras[:2] {
		cs := connect(t, url, "", era.version, nil)
		if _, ok := cs.InitializeResult().Capabilities.Extensions[uiExt]; !ok {
			t.Errorf("%s: a swappable server does not declare %s", era.name, uiExt)
		}
	}
	if err := h.Swap(shopSnapshot(t, "<p>v1</p>")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, url, "", "2025-11-25", nil)
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ui://shop.cart"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "<p>v1</p>" {
		t.Errorf("the view a swap gave: %+v, %v", res, err)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions[uiExt]; !ok {
		t.Errorf("after the swap: no %s", uiExt)
	}
}
