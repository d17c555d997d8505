package di_test

import (
	"context"
	"fmt"
	"reflect"

	"github.com/agnara-go/agnara/di"
)

type Config struct{ DSN string }

type DB struct{ dsn string }

type Session struct {
	db *DB
	id int
}

// Example registers a supplied value, a singleton and a per-invocation
// value, resolves a recipe twice and shows the order in which values are
// built and cleaned up.
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

	c, err := di.NewContainer(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	recipe, err := c.Recipe([]reflect.Type{reflect.TypeFor[*Session]()})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		dst := make([]reflect.Value, recipe.Len())
		release, err := recipe.Resolve(context.Background(), dst)
		if err != nil {
			fmt.Println(err)
			return
		}
		s := dst[0].Interface().(*Session)
		fmt.Println("use session", s.id, "on", s.db.dsn)
		if err := release(); err != nil {
			fmt.Println(err)
		}
	}
	if err := c.Close(); err != nil {
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
