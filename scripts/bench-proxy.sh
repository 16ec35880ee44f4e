#!/usr/bin/env bash
# What a validating proxy costs: quotes (POST /bridge/quote/user) at CONNECTIONS connections with wrk, in one run,
#   direct   straight to the sandbox
#   ours     through `bridge-conformance proxy` (every exchange checked: request decoded, answer validated
#            against its schema and generated type, violations header)
#   prism    through Prism's validating proxy (`prism proxy`, @stoplight/prism-cli from the npm registry, pinned)
# with a direct run between every two proxied runs: each proxied run is compared with the mean of the direct runs
# just before and after it (p50 added in ms, throughput ratio), so that load that comes and goes on a shared
# machine moves both sides alike. Loopback only, each run bounded by DURATION seconds; everything started is
# stopped at the end (by PID).
#
#   scripts/bench-proxy.sh                  # DURATION=10 CONNECTIONS=8 THREADS=1 ROUNDS=2
#   PRISM=0 scripts/bench-proxy.sh          # without Prism (no npm)
#
# Needs wrk (Debian: apt-get install wrk), and node/npm for Prism (installed into target/bench-tools/ on first use).
# The target: ours adds at most 0.1 ms to p50 and keeps at least 0.9x of the direct throughput.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-2}
PRISM=${PRISM:-1}
PRISM_VERSION=5.16.0
SANDBOX_PORT=${SANDBOX_PORT:-18490}
PROXY_PORT=${PROXY_PORT:-18491}
PRISM_PORT=${PRISM_PORT:-18492}

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 2; }

echo "== building (release)"
cargo build --release -q -p bridge-sandbox --bin bridge-sandbox
cargo build --release -q -p bridge-conformance --bin bridge-conformance
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
SANDBOX="$TARGET_DIR/release/bridge-sandbox"
CONFORMANCE="$TARGET_DIR/release/bridge-conformance"
if [ "$PRISM" = 1 ]; then
    command -v npm >/dev/null || { echo "npm is not installed (PRISM=0 to run without Prism)" >&2; exit 2; }
    TOOLS="$TARGET_DIR/bench-tools/prism-$PRISM_VERSION"
    if [ ! -x "$TOOLS/node_modules/.bin/prism" ]; then
        echo "== installing @stoplight/prism-cli@$PRISM_VERSION from the npm registry into $TOOLS"
        mkdir -p "$TOOLS"
        npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error "@stoplight/prism-cli@$PRISM_VERSION" >/dev/null
    fi
    PRISM_BIN="$TOOLS/node_modules/.bin/prism"
fi

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

wait_up() { # url
    for _ in $(seq 1 300); do
        if curl -s -o /dev/null "$1"; then return 0; fi
        sleep 0.1
    done
    echo "server at $1 did not come up" >&2
    exit 1
}

RUST_LOG=warn "$SANDBOX" serve --listen "127.0.0.1:$SANDBOX_PORT" --data "$WORK/data" --clock manual >"$WORK/sandbox.log" 2>&1 &
PIDS+=($!)
U="http://127.0.0.1:$SANDBOX_PORT"
wait_up "$U/webhook/public-key"
RUST_LOG=warn "$CONFORMANCE" proxy --upstream "$U" --listen "127.0.0.1:$PROXY_PORT" --sandbox-helpers \
    --json "$WORK/ours-report.json" >"$WORK/ours.log" 2>&1 &
OURS_PID=$!
PIDS+=($OURS_PID)
wait_up "http://127.0.0.1:$PROXY_PORT/_conformance/report"
if [ "$PRISM" = 1 ]; then
    "$PRISM_BIN" proxy src/generated/openapi.json "$U" --host 127.0.0.1 --port "$PRISM_PORT" --errors false \
        >"$WORK/prism.log" 2>&1 &
    PIDS+=($!)
    wait_up "http://127.0.0.1:$PRISM_PORT/webhook/public-key"
fi
TOKEN=$("$SANDBOX" token --project bench-proxy --data "$WORK/data")
QUOTE_BODY='{"token":"USDC","chainIn":"ETHEREUM","chainOut":"BASE","amount":"100","mode":"pay","depositor":"0x1111111111111111111111111111111111111111","recipient":"0x2222222222222222222222222222222222222222"}'
cat >"$WORK/quote.lua" <<LUA
wrk.method = "POST"
wrk.body = '$QUOTE_BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
LUA
# Each target answers a quote before it is measured (and the proxy checks it: no violation expected).
for port in "$SANDBOX_PORT" "$PROXY_PORT" $([ "$PRISM" = 1 ] && echo "$PRISM_PORT"); do
    curl -sf -o /dev/null -X POST "http://127.0.0.1:$port/bridge/quote/user" -H "Authorization: Bearer $TOKEN" \
        -H 'content-type: application/json' -d "$QUOTE_BODY"
done

run() { # name port
    local name=$1 port=$2
    local out="$WORK/$name.txt"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/quote.lua" "http://127.0.0.1:$port/bridge/quote/user" >"$out"
    if grep -q "Non-2xx" "$out"; then
        echo "$name: some answers were not 2xx:" >&2
        cat "$out" >&2
        exit 1
    fi
    local rps p50 p99 requests
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
    p50=$(awk '$1 == "50%" {print $2}' "$out")
    p99=$(awk '$1 == "99%" {print $2}' "$out")
    requests=$(awk '/requests in/ {print $1}' "$out")
    echo "$name $rps $p50 $p99 $requests" >>"$WORK/results"
}

echo "== wrk: $THREADS thread(s), $CONNECTIONS connections, ${DURATION}s per run, POST /bridge/quote/user on 127.0.0.1"
run direct-1 "$SANDBOX_PORT"
n=1
for round in $(seq 1 "$ROUNDS"); do
    run "ours-$round" "$PROXY_PORT"
    n=$((n + 1)); run "direct-$n" "$SANDBOX_PORT"
done
if [ "$PRISM" = 1 ]; then
    run prism "$PRISM_PORT"
    n=$((n + 1)); run "direct-$n" "$SANDBOX_PORT"
fi

echo
python3 - "$WORK/results" <<'PY'
import sys
def ms(text):
    for unit, factor in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)
rows = [line.split() for line in open(sys.argv[1])]
print(f"{'run':<10} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'requests':>9} {'p50 added ms':>13} {'throughput':>11}")
for i, (name, rps, p50, p99, requests) in enumerate(rows):
    if name.startswith("direct"):
        print(f"{name:<10} {float(rps):>11.1f} {ms(p50):>8.3f} {ms(p99):>8.3f} {requests:>9}")
        continue
    before, after = rows[i - 1], rows[i + 1]
    base_rps = (float(before[1]) + float(after[1])) / 2
    base_p50 = (ms(before[2]) + ms(after[2])) / 2
    print(f"{name:<10} {float(rps):>11.1f} {ms(p50):>8.3f} {ms(p99):>8.3f} {requests:>9} {ms(p50) - base_p50:>+13.3f} {float(rps) / base_rps:>10.3f}x")
PY
VIOLATIONS=$(curl -sf "http://127.0.0.1:$PROXY_PORT/_conformance/report" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["requests"], "exchanges checked,", r["violations"], "violations")')
echo
echo "ours: $VIOLATIONS"
echo "machine: $(nproc) cores, $(awk '/model name/ {$1=$2=$3=""; print; exit}' /proc/cpuinfo | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
