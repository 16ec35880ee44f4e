#!/usr/bin/env bash
# The sandbox over real HTTP on 127.0.0.1, measured with wrk, against a bare axum handler that returns fixed bytes
# (crates/bridge-sandbox/examples/bare_http.rs), all in the same run:
#   bare    GET  /                                   (the baseline: fixed bytes, no auth, no decoding, no store)
#   quote   POST /bridge/quote/user                  (JWT check, body decode, pricing, one durable insert)
#   bridge  GET  /bridge/history/bridge/{id}         (JWT check, path decode, one indexed read)
#   feed    GET  /webhook/user-events-cursor?sinceTimestamp=0&pageSize=50  (a page of 50 events)
#   page1   GET  /webhook/user-events-cursor?sinceTimestamp=0&pageSize=1   (a page of 1 event, bearer JWT)
#   page1-key  the same with an API key (x-api-key): the key's path of authentication against the token's
# Loopback only, each run bounded by DURATION seconds; both servers are stopped at the end (by their PIDs).
#
#   scripts/bench-http.sh                       # DURATION=10 CONNECTIONS=8 THREADS=1
#   DURATION=5 scripts/bench-http.sh            # shorter
#   BACKEND=postgres scripts/bench-http.sh      # the sandbox on a throw-away PostgreSQL server (initdb in a
#                                               # temporary directory, a free port; needs Debian's postgresql)
#   SANDBOX_FLAGS='--rate-limit 1e9' scripts/bench-http.sh   # more `serve` flags (here: the rate limit's check on
#                                               # every request, with a limit never reached)
#   SANDBOX_BIN=/tmp/before/bridge-sandbox scripts/bench-http.sh  # a sandbox binary built elsewhere (another
#                                               # commit), so that two builds are compared in one session
#   TARGETS='quote' scripts/bench-http.sh       # only these targets (of: quote bridge feed page1 page1-key)
#
# Needs wrk (Debian: apt-get install wrk). Prints one line per target and the ratio of its requests/s to the mean
# of the bare runs just before and just after it (bare runs between every two targets).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-1}
SANDBOX_PORT=${SANDBOX_PORT:-18480}
BARE_PORT=${BARE_PORT:-18481}

source scripts/bench-lib.sh
need_tools

echo "== building (release)"
cargo build --release -q -p bridge-sandbox --bin bridge-sandbox --example bare_http
SANDBOX="${SANDBOX_BIN:-$TARGET_DIR/release/bridge-sandbox}"
echo "== sandbox: $SANDBOX"
BARE="$TARGET_DIR/release/examples/bare_http"

BACKEND=${BACKEND:-sqlite}
STORE=(--data "$WORK/data")
if [ "$BACKEND" = postgres ]; then
    INITDB=$(command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | sort | tail -1)
    PGBIN=$(dirname "$(readlink -f "$INITDB")")
    AS=()
    if [ "$(id -u)" = 0 ]; then AS=(runuser -u postgres --); chmod 755 "$WORK"; mkdir -p "$WORK/pg"; chown postgres "$WORK/pg"; fi
    PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "${AS[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U sandbox --auth=trust -E UTF8 >/dev/null
    "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -o "-p $PG_PORT -h 127.0.0.1 -k $WORK/pg" -l "$WORK/pg/log" -w start >/dev/null
    stop_pg() { "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m fast -w stop >/dev/null || true; }
    trap 'stop_pg; cleanup' EXIT
    "${AS[@]}" "$PGBIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U sandbox bench
    STORE=(--database-url "postgres://sandbox@127.0.0.1:$PG_PORT/bench")
    echo "== PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (fsync on, defaults)"
fi
read -r -a EXTRA <<<"${SANDBOX_FLAGS:-}"
RUST_LOG=warn "$SANDBOX" serve --listen "127.0.0.1:$SANDBOX_PORT" "${STORE[@]}" --clock manual "${EXTRA[@]}" >"$WORK/sandbox.log" 2>&1 &
PIDS+=($!)
"$BARE" "127.0.0.1:$BARE_PORT" >"$WORK/bare.log" 2>&1 &
PIDS+=($!)
U="http://127.0.0.1:$SANDBOX_PORT"
wait_up "$U/webhook/public-key"
wait_up "http://127.0.0.1:$BARE_PORT/"
TOKEN=$("$SANDBOX" token --project bench-http "${STORE[@]}")
AUTH="Authorization: Bearer $TOKEN"

echo "== seeding: 60 committed quotes (60 BRIDGE_PENDING events)"
BRIDGE=""
for _ in $(seq 1 60); do
    QUOTE_ID=$(curl -sf -X POST "$U/bridge/quote/user" -H "$AUTH" -H 'content-type: application/json' -d "$QUOTE_BODY" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["quoteId"])')
    curl -sf -X POST "$U/bridge/quote/commit/$QUOTE_ID" -H "$AUTH" >/dev/null
    BRIDGE=$QUOTE_ID
done
FEED_COUNT=$(curl -sf "$U/webhook/user-events-cursor?sinceTimestamp=0&pageSize=50" -H "$AUTH" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
[ "$FEED_COUNT" = 50 ] || { echo "the feed page has $FEED_COUNT events, not 50" >&2; exit 1; }

quote_lua "$TOKEN" "$WORK/quote.lua"
cat >"$WORK/auth.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $TOKEN"
LUA
API_KEY=$("$SANDBOX" api-key --project bench-http --name bench "${STORE[@]}" 2>/dev/null)
cat >"$WORK/key.lua" <<LUA
wrk.headers["x-api-key"] = "$API_KEY"
LUA

echo "== wrk: $THREADS thread(s), $CONNECTIONS connections, ${DURATION}s per target, 127.0.0.1, store: $BACKEND"
# The bare baseline runs before and after every target: each target's ratio is to the mean of the two bare runs
# around it, so that load that comes and goes on a shared machine moves both sides of a ratio alike.
TARGETS=${TARGETS:-quote bridge feed page1 page1-key}
n=1
run "bare-$n" "http://127.0.0.1:$BARE_PORT/"
for target in $TARGETS; do
    case $target in
        quote) run quote "$U/bridge/quote/user" "$WORK/quote.lua" ;;
        bridge) run bridge "$U/bridge/history/bridge/$BRIDGE" "$WORK/auth.lua" ;;
        feed) run feed "$U/webhook/user-events-cursor?sinceTimestamp=0&pageSize=50" "$WORK/auth.lua" ;;
        page1) run page1 "$U/webhook/user-events-cursor?sinceTimestamp=0&pageSize=1" "$WORK/auth.lua" ;;
        page1-key) run page1-key "$U/webhook/user-events-cursor?sinceTimestamp=0&pageSize=1" "$WORK/key.lua" ;;
        *) echo "unknown target $target (quote bridge feed page1 page1-key)" >&2; exit 2 ;;
    esac
    n=$((n + 1))
    run "bare-$n" "http://127.0.0.1:$BARE_PORT/"
done

echo
printf '%-11s %12s %10s %10s %10s %16s\n' target 'requests/s' p50 p99 requests 'ratio to bare'
python3 - "$WORK/results" <<'PY'
import sys
rows = [line.split() for line in open(sys.argv[1])]
for i, (name, rps, p50, p99, requests) in enumerate(rows):
    if name.startswith("bare"):
        print(f"{name:<11} {rps:>12} {p50:>10} {p99:>10} {requests:>10} {'':>16}")
        continue
    around = (float(rows[i - 1][1]) + float(rows[i + 1][1])) / 2
    print(f"{name:<11} {rps:>12} {p50:>10} {p99:>10} {requests:>10} {float(rps) / around:>16.3f}")
PY
echo
machine_line
