package main

import (
	"testing"
	"time"

	"github.com/agnara-go/agnara/bench/internal/loadtest"
)

func TestLoad(t *testing.T) {
	h, err := handler()
	if err != nil {
		t.Fatal(err)
	}
	loadtest.Run(t, h, 2, 300*time.Millisecond)
}
