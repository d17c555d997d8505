package redislimit_test

import (
	"log"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/execution/redislimit"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/redis/go-redis/v9"
)

// Every instance behind the load balancer counts in the same Redis; while
// Redis is away each counts on its own.
func Example() {
	client := redis.NewClient(&redis.Options{Addr: "redis.internal:6379"})
	defer client.Close()
	local, err := execution.NewLocalLimiter(nil)
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := redislimit.New(client, &redislimit.Options{Fallback: local})
	if err != nil {
		log.Fatal(err)
	}
	_ = mcpexpose.ServerOptions{
		RateLimit: agnara.RateLimit{Rate: 5, Burst: 10}, // every tool without its own
		Limiter:   limiter,
	}
}
