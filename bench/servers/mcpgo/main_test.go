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
	loadtest.Run(t, h, 2, 300*time.Millisecond, load.Echo, load.Realistic)
}

// TestValidatesQuotes: the server validates the realistic workload's input.
func TestValidatesQuotes(t *testing.T) {
	h, err := handler()
	if err != nil {
		t.Fatal(err)
	}
	loadtest.RefusesInvalidQuotes(t, h)
}
