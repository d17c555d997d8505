package di_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
)

type Config struct{ DSN string }

type DB struct{ dsn string }

type Session struct {
	db *DB
	id int
}

// Example registers a supplied value, a singleton and a per-invocation
// value, hands the registry to an application, and invokes a capability
// that needs the per-invocation value twice: the output shows the order in
// which values are built and cleaned up. The singleton is built on first
// use and closed with the application.
func Example() {
	reg := di.NewRegistry()
	di.Supply(reg, Config{DSN: "mem://app"})
	di.Provide(reg, func(cfg Config) (*DB, func()) {
		fmt.Println("open db", cfg.DSN)
		return &DB{dsn: cfg.DSN}, func() { fmt.Println("close db") }
	})
	sessions := 0
	di.ProvidePerInvocation(reg, func(ctx context.Context, db *DB) (*Session, func(), error) {
		sessions++
		id := sessions
		fmt.Println("begin session", id)
		return &Session{db: db, id: id}, func() { fmt.Println("end session", id) }, nil
	})

	app := agnara.New("app", &agnara.Options{Dependencies: reg})
	lookup := app.Capability(func(ctx context.Context, s *Session) error {
		fmt.Println("use session", s.id, "on", s.db.dsn)
		return nil
	}, &agnara.CapabilityOptions{Name: "lookup", Description: "Looks something up in a session."})
	plans, err := execution.Compile(app)
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, _ := plans.Plan(lookup)
	for range 2 {
		if _, err := plan.Invoke(context.Background(), &execution.Invocation{}); err != nil {
			fmt.Println(err)
		}
	}
	if err := app.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// open db mem://app
	// begin session 1
	// use session 1 on mem://app
	// end session 1
	// begin session 2
	// use session 2 on mem://app
	// end session 2
	// close db
}
