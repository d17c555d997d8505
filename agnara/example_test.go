package agnara_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
)

type DeleteUserInput struct {
	ID string `json:"id"`
}

func DeleteUser(ctx context.Context, in DeleteUserInput) error { return nil }

func ExampleApp_Capability() {
	app := agnara.New("users", &agnara.Options{Version: "1.0.0"})

	del := app.Capability(DeleteUser, &agnara.CapabilityOptions{
		Description: "Deletes a user.",
		Scopes:      []string{"users:admin"},
		Confirm:     "Delete this user?",
		Annotations: agnara.Destructive | agnara.Idempotent,
	})
	count := app.Capability(func(ctx context.Context) (int, error) { return 0, nil },
		&agnara.CapabilityOptions{Name: "count_users", Annotations: agnara.ReadOnly})

	for _, c := range app.Capabilities() {
		fmt.Println(c.Identity(), c.Options().Annotations)
	}
	fmt.Println(del.Options().Scopes, count.Name())

	// A named function's capability is named after it, in snake_case.
	fmt.Println(app.Capability(GetUserByID, nil).Name())
	// Output:
	// users.delete_user destructive|idempotent
	// users.count_users read-only
	// [users:admin] count_users
	// get_user_by_id
}

func ExampleAnnotations_String() {
	fmt.Println(agnara.Annotations(0))
	fmt.Println(agnara.ReadOnly | agnara.Idempotent)
	// Output:
	// none
	// read-only|idempotent
}
