package redisreplay_test

import (
	"context"
	"log"
	"log/slog"
	"net/http"
	"os"

	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/mcpexpose/requeststate/redisreplay"
)

// One instance of several behind a load balancer: the key file and Redis
// are what the instances share, so a confirmation asked by one completes on
// any other, once. (Not run: it needs the key file and a Redis.)
func ExampleOpen() {
	ctx := context.Background()
	ring, err := requeststate.LoadKeyRing("/etc/agnara/state.keys") // agnara keys generate -o FILE
	if err != nil {
		log.Fatal(err)
	}
	// The logger hears when Redis lost its memory (restarted, flushed,
	// failed over) and the store began refusing the states sealed before.
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	replay, closeRedis, err := redisreplay.Open(ctx, "redis://127.0.0.1:6379/0", &redisreplay.Options{Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	defer closeRedis()

	var snap *mcpexpose.Snapshot // from mcpexpose.New(app)...Compile()
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{
		StateKeys:   ring,
		StateReplay: replay,
	}})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", h))
}

// On Sentinel, name the sentinels and the master; Replicas makes each use
// wait until a replica holds it, so that no failover or partition can bring
// back a state already used. A Cluster URL names its nodes instead:
// "redis://node1:7000?addr=node2:7000&addr=node3:7000". (Not run: it needs
// the sentinels.)
func ExampleOpen_sentinel() {
	url := "redis://sentinel1:26379/0?master_name=mymaster&addr=sentinel2:26379&addr=sentinel3:26379"
	replay, closeRedis, err := redisreplay.Open(context.Background(), url, &redisreplay.Options{Replicas: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer closeRedis()
	_ = mcpexpose.ServerOptions{StateReplay: replay}
}
