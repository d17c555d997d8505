package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// Inputs of the resource template and prompt fixtures.
type (
	TemplateIn struct {
		ID string `json:"id"`
	}
	PromptArgsIn struct {
		Arg1 string `json:"arg1" jsonschema:"description=First test argument"`
		Arg2 string `json:"arg2" jsonschema:"description=Second test argument"`
	}
	EmbeddedIn struct {
		ResourceURI string `json:"resourceUri" jsonschema:"description=URI of the resource to embed"`
	}
	// TemplateData is what test://template/{id}/data reads as JSON.
	TemplateData struct {
		ID           string `json:"id"`
		TemplateTest bool   `json:"templateTest"`
		Data         string `json:"data"`
	}
	ContextForm struct {
		Context string `json:"context"`
	}
)

var contextForm = execution.NewForm[ContextForm]("What context should the prompt use?")

// declareFeatures declares the suite's resource, template and prompt
// fixtures on exp, as capabilities of app registered once (caps caches
// them across the exposures newHandler builds), and test_toggled_prompt
// when asked.
func declareFeatures(app *agnara.App, exp *mcpexpose.Exposure, caps map[string]*agnara.Capability, withToggledPrompt bool) {
	capability := func(name, description string, fn any, opts agnara.CapabilityOptions) *agnara.Capability {
		if c, ok := caps[name]; ok {
			return c
		}
		opts.Name, opts.Description = name, description
		c := app.Capability(fn, &opts)
		caps[name] = c
		return c
	}
	exp.Resource(capability("static_text", "A static text resource.", func() (string, error) {
		return "This is the content of the static text resource.", nil
	}, agnara.CapabilityOptions{}), &mcpexpose.ResourceOptions{URI: "test://static-text", Name: "static-text", MIMEType: "text/plain"})
	exp.Resource(capability("static_binary", "A static binary resource (a 1x1 PNG).", func() ([]byte, error) {
		return png, nil
	}, agnara.CapabilityOptions{}), &mcpexpose.ResourceOptions{URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png"})
	exp.Resource(capability("watched", "A resource clients may subscribe to.", func() (string, error) {
		return "Watched resource content.", nil
	}, agnara.CapabilityOptions{}), &mcpexpose.ResourceOptions{URI: "test://watched-resource", Name: "watched-resource", MIMEType: "text/plain"})
	exp.ResourceTemplate(capability("template_data", "Data for one id.", func(in TemplateIn) (TemplateData, error) {
		return TemplateData{ID: in.ID, TemplateTest: true, Data: "Data for ID: " + in.ID}, nil
	}, agnara.CapabilityOptions{}), &mcpexpose.ResourceTemplateOptions{URITemplate: "test://template/{id}/data", Name: "template-data", MIMEType: "application/json"})

	text := func(s string) execution.Message {
		return execution.Message{Role: execution.User, Content: execution.Text{Text: s}}
	}
	exp.Prompt(capability("test_simple_prompt", "A prompt without arguments.", func() ([]execution.Message, error) {
		return []execution.Message{text("This is a simple prompt for testing.")}, nil
	}, agnara.CapabilityOptions{}), &mcpexpose.PromptOptions{Name: "test_simple_prompt"})
	exp.Prompt(capability("test_prompt_with_arguments", "A prompt with two arguments.", func(in PromptArgsIn) ([]execution.Message, error) {
		return []execution.Message{text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", in.Arg1, in.Arg2))}, nil
	}, agnara.CapabilityOptions{}), &mcpexpose.PromptOptions{Name: "test_prompt_with_arguments", Complete: map[string]mcpexpose.Completer{
		"arg1": prefixCompleter("paris", "park", "party"),
		"arg2": prefixCompleter("world", "word"),
	}})
	exp.Prompt(capability("test_prompt_embedded", "A prompt embedding a resource.", func(in EmbeddedIn) ([]execution.Message, error) {
		return []execution.Message{
			{Role: execution.User, Content: execution.Resource{URI: in.ResourceURI, MIMEType: "text/plain", Text: "Embedded resource content for testing."}},
			text("Please process the embedded resource above."),
		}, nil
	}, agnara.CapabilityOptions{}), &mcpexpose.PromptOptions{Name: "test_prompt_with_embedded_resource"})
	exp.Prompt(capability("test_prompt_with_image", "A prompt with an image.", func() ([]execution.Message, error) {
		return []execution.Message{
			{Role: execution.User, Content: execution.Image{Data: png, MIMEType: "image/png"}},
			text("Please analyze the image above."),
		}, nil
	}, agnara.CapabilityOptions{}), &mcpexpose.PromptOptions{Name: "test_prompt_with_image"})
	exp.Prompt(capability("test_irr_prompt", "A prompt that asks the user for context first.", func(ec *execution.Context) ([]execution.Message, error) {
		v, err := execution.Ask(ec, "user_context", contextForm)
		if err != nil {
			return nil, err
		}
		return []execution.Message{text("Use this context: " + v.Context)}, nil
	}, agnara.CapabilityOptions{Forms: []agnara.Form{contextForm}}), &mcpexpose.PromptOptions{Name: "test_input_required_result_prompt"})
	toggled := capability("test_toggled_prompt", "Listed while test_trigger_prompt_change has turned it on.", func() (string, error) {
		return "toggled on", nil
	}, agnara.CapabilityOptions{})
	if withToggledPrompt {
		exp.Prompt(toggled, &mcpexpose.PromptOptions{Name: "test_toggled_prompt"})
	}
}

// prefixCompleter completes from a fixed list, by prefix.
func prefixCompleter(values ...string) mcpexpose.Completer {
	return func(_ context.Context, req mcpexpose.CompletionRequest) ([]string, error) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, req.Value) {
				out = append(out, v)
			}
		}
		return out, nil
	}
}
