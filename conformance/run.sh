#!/usr/bin/env bash
# Runs the official MCP conformance suite against the fixture server, at the
# three protocol revisions it serves, with conformance/baseline.yml: once with the handler's
# fast path and once without it (a server process each). Exit status is
# the suite's verdict. Needs `npm ci` in this folder first (make deps).
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -x node_modules/.bin/conformance ]; then
  echo "conformance: run 'npm ci' in conformance/ (or 'make deps') first" >&2
  exit 2
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/server" ./server

# The suite runs twice: against the handler with its fast path (the
# default) and without it (-fast-path=false); both must pass (ADR 68).
status=0
for fast in true false; do
"$work/server" -addr 127.0.0.1:0 -fast-path="$fast" >"$work/url" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/url" ] && break
  sleep 0.1
done
url=$(head -n 1 "$work/url")
case "$url" in
  http://127.0.0.1:*/mcp) ;;
  *) echo "conformance: fixture server did not start" >&2; cat "$work/server.log" >&2; exit 1 ;;
esac
echo "conformance: fixture server at $url (pid $server_pid), fast path $fast"

# 2026-07-28 and 2025-11-25 have a frozen requirement set; 2025-06-18 has
# none in the suite, so it runs the scenarios that apply to that revision.
for rev in 2026-07-28 2025-11-25 2025-06-18; do
  select="--requirements $rev"
  [ "$rev" = 2025-06-18 ] && select="--spec-version $rev"
  echo "=== conformance $select (fast path $fast)"
  # shellcheck disable=SC2086 # $select is two words on purpose
  if timeout 600 npx --no-install conformance server --url "$url" $select \
      --expected-failures baseline.yml -o "$work/results-$rev-$fast" >"$work/out-$rev.txt" 2>&1; then
    echo "--- $rev: pass"
  else
    status=1
    echo "--- $rev: FAIL"
  fi
  # One line per revision: how many scenarios passed, which failed
  # (expected ones are in baseline.yml; an unexpected one fails the run and
  # the suite's own lines about it follow), and how many of the suite's
  # lines are WARNINGs (checks that passed with a reservation).
  plain=$(sed 's/\x1b\[[0-9;]*m//g' "$work/out-$rev.txt")
  passed=$(grep -c '^✓ ' <<<"$plain" || true)
  failed=$( (grep '^✗ ' <<<"$plain" || true) | sed -E 's/^✗ ([^:]+):.*/\1/' | paste -sd, - | sed 's/,/, /g')
  warnings=$(grep -c 'WARNING' <<<"$plain" || true)
  echo "    $passed scenarios passed; failed: ${failed:-none}; warnings: $warnings"
  grep -E 'Unexpected|Stale|stale' <<<"$plain" || true
done
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""
: >"$work/url"
done
exit "$status"
