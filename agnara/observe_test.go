package agnara_test

import (
	"context"
	"testing"

	"github.com/agnara-go/agnara/agnara"
)

func TestStageString(t *testing.T) {
	for _, tt := range []struct {
		stage agnara.Stage
		want  string
	}{
		{agnara.StagePolicy, "policy"},
		{agnara.StageConfirmation, "confirmation"},
		{agnara.StageDependencies, "dependencies"},
		{agnara.StageHandler, "handler"},
		{0, "Stage(0)"},
		{agnara.StageHandler + 1, "Stage(5)"},
	} {
		if got := tt.stage.String(); got != tt.want {
			t.Errorf("Stage(%d).String() = %q, want %q", uint8(tt.stage), got, tt.want)
		}
	}
}

func TestLabelFailed(t *testing.T) {
	for _, tt := range []struct {
		label agnara.Label
		want  bool
	}{
		{agnara.LabelOK, false},
		{agnara.LabelInputRequired, false},
		{agnara.LabelCanceled, true},
		{agnara.LabelError, true},
		{"invalid_input", true},
	} {
		if got := tt.label.Failed(); got != tt.want {
			t.Errorf("%q.Failed() = %t, want %t", tt.label, got, tt.want)
		}
	}
}

type nopObserver struct{}

func (nopObserver) Request(ctx context.Context, _ agnara.RequestInfo) (context.Context, func(agnara.Label, error)) {
	return ctx, func(agnara.Label, error) {}
}

func (nopObserver) Stage(ctx context.Context, _ string, _ agnara.Stage) (context.Context, func(error)) {
	return ctx, func(error) {}
}

func TestAppObserver(t *testing.T) {
	var o agnara.Observer = nopObserver{}
	if got := agnara.New("app", &agnara.Options{Observer: o}).Observer(); got != o {
		t.Errorf("Observer() = %v, want the one in Options", got)
	}
}
