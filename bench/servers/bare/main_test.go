package main

import (
	"testing"
	"time"

	"github.com/agnara-go/agnara/bench/internal/loadtest"
	"github.com/agnara-go/agnara/bench/load"
)

func TestLoad(t *testing.T) {
	h, err := handler()
	if err != nil {
		t.Fatal(err)
	}
	loadtest.Run(t, h, 2, time.Second, load.Echo, load.Realistic)
}
