# agnara-go. `make test` is what CI runs (.ci/run) and what a new user runs.

GO ?= go

.PHONY: test deps vet unit fmt-check conformance bench fuzz run

test: deps fmt-check vet unit conformance

# Pinned MCP peers (official conformance suite on Node 22, TypeScript SDK
# client) from conformance/package-lock.json; installed once, again when the
# lockfile changes.
deps: conformance/node_modules/.installed

conformance/node_modules/.installed: conformance/package-lock.json
	cd conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $@

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

# The official MCP conformance suite, both protocol revisions, against one
# fixture server process (conformance/run.sh, conformance/baseline.yml).
conformance: deps
	./conformance/run.sh

# In-process benchmarks, allocations reported.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Fuzz each target for FUZZTIME (default 30s). Seed corpora are in each
# package's testdata/fuzz and also run, briefly, in `make test`.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzArguments$$' -fuzztime $(FUZZTIME) ./execution/
	$(GO) test -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) ./mcpexpose/requeststate/

# The main example.
run:
	$(GO) run ./examples/users
