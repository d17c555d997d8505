package execution

import (
	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/registry"
)

// FormSeal makes a Form an [agnara.Form], so that it can be declared in
// agnara.CapabilityOptions.Forms. It does nothing.
func (*Form[T]) FormSeal(registry.Sealed) {}

var _ agnara.Form = (*Form[struct{}])(nil)
