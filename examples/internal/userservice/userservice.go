// Package userservice is the small user service the examples expose: an
// in-memory store, and capabilities to get, list, create and delete users.
package userservice

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
)

// User is one user of the service.
type User struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Email   string    `json:"email"`
	Created time.Time `json:"created"`
}

// Store is an in-memory user store, safe for concurrent use. It stands in
// for the database a real service would inject.
type Store struct {
	mu    sync.Mutex
	next  int
	users map[string]User
	now   func() time.Time
}

// NewStore returns an empty store.
func NewStore() *Store {
	return NewStoreWithClock(time.Now)
}

// NewStoreWithClock returns an empty store that stamps users with now().
func NewStoreWithClock(now func() time.Time) *Store {
	return &Store{users: map[string]User{}, now: now}
}

// GetUserInput names one user.
type GetUserInput struct {
	ID string `json:"id" jsonschema:"minLength=1" jsonschema_description:"The user's id."`
}

// GetUser looks up one user by id.
func GetUser(ctx context.Context, in GetUserInput, s *Store) (User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[in.ID]
	if !ok {
		return User{}, execution.Fail(execution.NotFound, "no user with this id", nil)
	}
	return u, nil
}

// ListUsersInput pages through users.
type ListUsersInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100" jsonschema_description:"At most this many users (default 20)."`
}

// ListUsers lists users in id order.
func ListUsers(ctx context.Context, in ListUsersInput, s *Store) ([]User, error) {
	limit := in.Limit
	if limit == 0 {
		limit = 20
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]User, 0, len(s.users))
	for _, u := range s.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b User) int { return compareIDs(a.ID, b.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// CreateUserInput describes a new user.
type CreateUserInput struct {
	Name  string `json:"name" jsonschema:"minLength=1,maxLength=100"`
	Email string `json:"email" jsonschema:"format=email"`
}

// CreateUser adds a user.
func CreateUser(ctx context.Context, in CreateUserInput, s *Store) (User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u.Email == in.Email {
			return User{}, execution.Fail(execution.Conflict, "a user with this email exists", nil)
		}
	}
	s.next++
	u := User{ID: strconv.Itoa(s.next), Name: in.Name, Email: in.Email, Created: s.now().UTC()}
	s.users[u.ID] = u
	return u, nil
}

// DeleteUser removes a user.
func DeleteUser(ctx context.Context, in GetUserInput, s *Store) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[in.ID]; !ok {
		return execution.Fail(execution.NotFound, "no user with this id", nil)
	}
	delete(s.users, in.ID)
	return nil
}

func compareIDs(a, b string) int {
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	return x - y
}

// Capabilities are the users application's capabilities.
type Capabilities struct {
	Get, List, Create, Delete *agnara.Capability
}

// NewApp builds the users application around store. Deleting requires
// confirmation: until a client can give it (the interaction issue), delete
// answers interaction_required.
func NewApp(store *Store, opts *agnara.Options) (*agnara.App, Capabilities) {
	o := agnara.Options{}
	if opts != nil {
		o = *opts
	}
	o.Dependencies = di.NewRegistry()
	di.Supply(o.Dependencies, store)
	app := agnara.New("users", &o)
	return app, Capabilities{
		Get: app.Capability(GetUser, &agnara.CapabilityOptions{
			Title:       "Get user",
			Description: "Look up one user by id.",
			Scopes:      []string{"users:read"},
			Annotations: agnara.ReadOnly | agnara.Idempotent,
		}),
		List: app.Capability(ListUsers, &agnara.CapabilityOptions{
			Title:       "List users",
			Description: "List users in id order.",
			Scopes:      []string{"users:read"},
			Annotations: agnara.ReadOnly | agnara.Idempotent,
		}),
		Create: app.Capability(CreateUser, &agnara.CapabilityOptions{
			Title:       "Create user",
			Description: "Create a user with a name and a unique email address.",
			Scopes:      []string{"users:write"},
		}),
		Delete: app.Capability(DeleteUser, &agnara.CapabilityOptions{
			Title:       "Delete user",
			Description: "Delete a user. This cannot be undone.",
			Scopes:      []string{"users:admin"},
			Confirm:     "Delete this user? This cannot be undone.",
			Annotations: agnara.Destructive | agnara.Idempotent,
			Timeout:     5 * time.Second,
		}),
	}
}
