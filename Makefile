# agnara-go. `make test` is what CI runs (.ci/run) and what a new user runs.

GO ?= go

.PHONY: test vet unit fmt-check bench fuzz run

test: fmt-check vet unit

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

# In-process benchmarks, allocations reported.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Fuzz each target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzArguments$$' -fuzztime $(FUZZTIME) ./execution/

# The main example.
run:
	$(GO) run ./examples/users
