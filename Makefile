# agnara-go. `make test` is what CI runs (.ci/run) and what a new user runs.

GO ?= go

.PHONY: screenshots test check deps engines vet api-check api-release lint vulncheck unit fuzz-short fmt-check conformance bench bench-check bench-go bench-scaling soak soak-short fuzz run alerts-check

test: deps engines fmt-check vet api-check lint vulncheck unit fuzz-short conformance bench-check soak-short alerts-check

# A test whose peer is missing (the npm packages of `make deps`, Node.js,
# Chromium, git, an engine of `make engines`) skips under a plain
# `go test ./...`, so that a fresh clone's first run passes; under these two
# targets, and in CI (.ci/run), it fails instead, so the gate never passes
# by skipping (internal/peers, ADR 27). The setting reaches every
# prerequisite, and sub-makes through the environment.
test check: export AGNARA_REQUIRE_PEERS = 1

# The quick loop for contributors (about 4.5 minutes on 2 cores): gofmt,
# vet, the API check, the linters of this module and every test once,
# without the race detector, fuzzing, the vulnerability check, the
# benchmark module or the conformance suite.
check: deps engines fmt-check vet api-check
	$(GO) test -count=1 ./internal/lintgate/
	$(GO) run $(STATICCHECK) ./...
	$(GO) test -count=1 ./...

# Pinned MCP peers (official conformance suite on Node 22, TypeScript SDK
# clients, the MCP Apps SDK and esbuild, which the MCP Apps browser test
# bundles it with) from conformance/package-lock.json; installed once, again
# when the lockfile changes.
deps: conformance/node_modules/.installed peers/authserver/.modules

# The authorization server the gateway's credential tests start on
# loopback (peers/authserver, zitadel/oidc's OpenID provider; built by
# internal/astest): its Go modules, from the module proxy.
peers/authserver/.modules: peers/authserver/go.sum
	cd peers/authserver && $(GO) mod download && $(GO) mod verify
	touch $@

conformance/node_modules/.installed: conformance/package-lock.json
	cd conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The engines the tests start on loopback (internal/enginetest): Redis,
# PostgreSQL, PgBouncer and HAProxy, from Debian's packages. Installed when missing (as
# root: .ci/apt-install, which waits for the package manager's lock while
# another apt-get or dpkg holds it; otherwise it says what to install). Their system services
# are not used; each test starts its own server on a free port. Debian's
# prometheus package is installed for its promtool alone (alerts-check).
ENGINE_PACKAGES = redis-server postgresql pgbouncer haproxy prometheus
engines:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	[ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null 2>&1 || missing="$$missing haproxy"; \
	[ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || missing="$$missing pgbouncer"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing$$missing"; \
			.ci/apt-install$$missing; \
		else \
			echo "the tests need$$missing: run sudo apt-get install -y$$missing"; exit 1; \
		fi; \
	fi

# The Prometheus alerting rules shipped beside the Grafana dashboard,
# checked by Prometheus's own promtool (from `make engines`; only the tool
# is used, never the prometheus service). Their metric names are checked
# against the code by prommcp's TestDashboardAndDocsNameRegisteredMetrics.
alerts-check:
	promtool check rules docs/prometheus/alerts.yml

# The API holds still (DESIGN 9b, ADR 70): the exported API of every
# package another module can import, against the last release's
# (api/v<agnara.Version>.zip), compared by golang.org/x/exp/apidiff. api/
# is a module of its own: x/exp never reaches a service's go.sum, and the
# baseline is not in the module's zip that every importer downloads (it
# needs Go 1.26, which the go command fetches). An incompatible change
# fails unless api/next.txt records it below words of a CHANGELOG
# "Breaking" bullet; and the packages a service author imports must export
# fewer identifiers than go-sdk's mcp package, 392 (ADR 73). The checker's
# own tests run first.
api-check:
	cd api && $(GO) vet ./... && $(GO) test -count=1 ./... && $(GO) run . -dir "$(CURDIR)"

# At a release, once agnara.Version names it: the release's API becomes the
# baseline (api/v<version>.zip, the previous one removed) and api/next.txt
# is emptied, its records now in the release's CHANGELOG section.
api-release:
	cd api && $(GO) run . -dir "$(CURDIR)" -write

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd peers/authserver && $(GO) vet ./...

# staticcheck, pinned, from the Go module proxy. Deliberate exceptions are
# marked in the code with //lint:ignore or //lint:file-ignore and a reason.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# internal/lintgate forbids panic, printing to standard output and the
# global log package in library code (it also runs with every go test).
lint:
	$(GO) test -count=1 ./internal/lintgate/
	$(GO) run $(STATICCHECK) ./...
	cd bench && $(GO) run $(STATICCHECK) ./...
	cd api && $(GO) run $(STATICCHECK) ./...
	cd peers/authserver && $(GO) run $(STATICCHECK) ./... && $(GO) test -count=1 ./...

unit:
	$(GO) test -race -count=1 ./...

# The official MCP conformance suite, at each protocol revision served, against one
# fixture server process (conformance/run.sh, conformance/baseline.yml).
conformance: deps
	./conformance/run.sh

# Loopback HTTP benchmark: agnara-go, the raw SDK, mcp-go and a bare
# net/http handler, both protocol eras (bench/ is its own module; see
# bench/README.md). Writes bench/results/{results.md,results.json,chart.png}.
bench:
	cd bench && GO="$(GO)" $(GO) run ./cmd/bench -out results

# The benchmark module's own vet and tests (load generator, servers,
# report), so that `make bench` keeps working.
bench-check:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./...

# Soak of the users example (bench/cmd/soak): a bounded mix of valid,
# invalid, unknown-tool, interaction and cancelled calls in both eras; fails
# on any unexpected outcome or on descriptor or memory growth.
SOAK_C ?= 64
SOAK_D ?= 60s
soak:
	cd bench && GO="$(GO)" $(GO) run ./cmd/soak -c $(SOAK_C) -d $(SOAK_D)

soak-short:
	cd bench && GO="$(GO)" $(GO) run ./cmd/soak -c 16 -d 10s

# govulncheck, pinned, against a vulnerability database built locally from
# the pinned golang.org/x/vulndb module (vuln.go.dev is not reachable from
# every build machine). It analyses with VULN_TOOLCHAIN, the patched Go
# release servers should be built with (the go command downloads it from
# the module proxy): go1.26.8's standard library has ten known
# vulnerabilities, fixed in go1.26.9 and go1.26.10. See docs/operating.md.
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018
VULNDB_DIR ?= $(CURDIR)/.vulndb
VULN_TOOLCHAIN ?= go1.26.10
vulncheck: export GOTOOLCHAIN = $(VULN_TOOLCHAIN)
vulncheck:
	@if [ ! -d "$(VULNDB_DIR)/ID" ]; then \
		$(GO) mod download golang.org/x/vulndb@$(VULNDB_VERSION) && \
		$(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) \
			-vulns "$$($(GO) env GOMODCACHE)/golang.org/x/vulndb@$(VULNDB_VERSION)/data/osv" -out "$(VULNDB_DIR)"; \
	fi
	$(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db file://$(VULNDB_DIR) ./...

# In-process benchmarks of this module, allocations reported.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./execution/ ./mcpexpose/ ./mcpimport/

# What sharing state between instances costs (docs/scaling.md): the same
# operation with the in-process store and with Redis or PostgreSQL, side by
# side in one run each.
BENCH_COUNT ?= 10
bench-scaling: engines
	$(GO) test -run '^$$' -bench '^BenchmarkOpen$$' -count $(BENCH_COUNT) ./mcpexpose/requeststate/redisreplay/
	$(GO) test -run '^$$' -bench '^BenchmarkConfirmationRound$$' -count $(BENCH_COUNT) ./conformance/server/
	$(GO) test -run '^$$' -bench '^BenchmarkStore$$' -count $(BENCH_COUNT) ./approval/

# Each fuzz target, briefly (seed corpora also run as plain tests). A count,
# not a duration: with a duration the Go fuzzing coordinator can fail a
# target with "context deadline exceeded" when the time runs out under load
# (a race in internal/fuzz, not a crash); a count has no deadline to race.
fuzz-short:
	$(MAKE) fuzz FUZZTIME=5000x

# Fuzz each target for FUZZTIME (default 30s). Seed corpora are in each
# package's testdata/fuzz and also run, briefly, in `make test`.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzArguments$$' -fuzztime $(FUZZTIME) ./execution/
	$(GO) test -run '^$$' -fuzz '^FuzzParseDocument$$' -fuzztime $(FUZZTIME) ./execution/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeAgreesWithEncodingJSON$$' -fuzztime $(FUZZTIME) ./execution/
	$(GO) test -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) ./mcpexpose/requeststate/
	$(GO) test -run '^$$' -fuzz '^FuzzHandler$$' -fuzztime $(FUZZTIME) ./mcpexpose/
	$(GO) test -run '^$$' -fuzz '^FuzzFastPath$$' -fuzztime $(FUZZTIME) ./mcpexpose/
	$(GO) test -run '^$$' -fuzz '^FuzzSessionEdge$$' -fuzztime $(FUZZTIME) ./mcpexpose/
	$(GO) test -run '^$$' -fuzz '^FuzzCanonicalJSON$$' -fuzztime $(FUZZTIME) ./mcpexpose/internal/projection/
	$(GO) test -run '^$$' -fuzz '^FuzzEncodeOnce$$' -fuzztime $(FUZZTIME) ./mcpexpose/internal/projection/
	$(GO) test -run '^$$' -fuzz '^FuzzTextResult$$' -fuzztime $(FUZZTIME) ./mcpexpose/internal/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzCanonicalize$$' -fuzztime $(FUZZTIME) ./internal/canonjson/
	$(GO) test -run '^$$' -fuzz '^FuzzSchemaProfile$$' -fuzztime $(FUZZTIME) ./mcpimport/
	$(GO) test -run '^$$' -fuzz '^FuzzResultContent$$' -fuzztime $(FUZZTIME) ./mcpimport/
	$(GO) test -run '^$$' -fuzz '^FuzzFastCallAnswers$$' -fuzztime $(FUZZTIME) ./mcpimport/
	$(GO) test -run '^$$' -fuzz '^FuzzDocumentOf$$' -fuzztime $(FUZZTIME) ./mcpimport/
	$(GO) test -run '^$$' -fuzz '^FuzzSamePerson$$' -fuzztime $(FUZZTIME) ./approval/
	$(GO) test -run '^$$' -fuzz '^FuzzResultOf$$' -fuzztime $(FUZZTIME) ./internal/taskclient/

# The main example.
run:
	$(GO) run ./examples/users

# The screenshots in docs/images, from the browser tests: the approval
# inbox's, and an MCP App through the gateway (docs/apps-browser.md).
screenshots: deps
	mkdir -p docs/images
	AGNARA_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^TestInboxPagesFitTheScreen$$' ./approval/inbox/
	AGNARA_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^TestAppsSeenInChromium$$' ./gateway/
