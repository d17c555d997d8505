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
		fmt.Println(c.Identity(), c.Options().Annotations, c.Err())
	}
	fmt.Println(del.Options().Scopes, count.Name())

	for _, s := range []string{"GetUser", "GetUserByID", "HTTPServer", "ListV2Items"} {
		fmt.Println(s, "->", agnara.SnakeCase(s))
	}
	// Output:
	// users.delete_user destructive|idempotent <nil>
	// users.count_users read-only <nil>
	// [users:admin] count_users
	// GetUser -> get_user
	// GetUserByID -> get_user_by_id
	// HTTPServer -> http_server
	// ListV2Items -> list_v2_items
}

func ExampleAnnotations_String() {
	fmt.Println(agnara.Annotations(0))
	fmt.Println(agnara.ReadOnly | agnara.Idempotent)
	// Output:
	// none
	// read-only|idempotent
}
