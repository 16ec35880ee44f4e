#!/usr/bin/env bash
# What a validating proxy costs: quotes (POST /bridge/quote/user) at CONNECTIONS connections with wrk, in one run,
#   direct   straight to the sandbox
#   ours     through `bridge-conformance proxy` (every exchange checked: request decoded, answer validated
#            against its schema and generated type, violations header)
#   floor    through a pass-through proxy with no checks (crates/bridge-conformance/examples/bare_proxy.rs: the
#            same hyper server and pooled client): the price of the second hop alone
#   prism    through Prism's validating proxy (`prism proxy`, @stoplight/prism-cli from the npm registry, pinned)
# with a direct run between every two proxied runs: each proxied run is compared with the mean of the direct runs
# just before and after it (p50 added in ms, throughput ratio), so that load that comes and goes on a shared
# machine moves both sides alike. Loopback only, each run bounded by DURATION seconds; everything started is
# stopped at the end (by PID).
#
#   scripts/bench-proxy.sh                  # DURATION=10 CONNECTIONS=8 THREADS=1 ROUNDS=2
#   PRISM=0 scripts/bench-proxy.sh          # without Prism (no npm)
#   BEFORE=/tmp/old/bridge-conformance scripts/bench-proxy.sh   # also another build of the proxy ("before")
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
FLOOR_PORT=${FLOOR_PORT:-18493}
BEFORE_PORT=${BEFORE_PORT:-18494}
BEFORE=${BEFORE:-}

source scripts/bench-lib.sh
need_tools

echo "== building (release)"
cargo build --release -q -p bridge-sandbox --bin bridge-sandbox
cargo build --release -q -p bridge-conformance --bin bridge-conformance --example bare_proxy
SANDBOX="$TARGET_DIR/release/bridge-sandbox"
CONFORMANCE="$TARGET_DIR/release/bridge-conformance"
FLOOR="$TARGET_DIR/release/examples/bare_proxy"
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

RUST_LOG=warn "$SANDBOX" serve --listen "127.0.0.1:$SANDBOX_PORT" --data "$WORK/data" --clock manual >"$WORK/sandbox.log" 2>&1 &
PIDS+=($!)
U="http://127.0.0.1:$SANDBOX_PORT"
wait_up "$U/webhook/public-key"
RUST_LOG=warn "$CONFORMANCE" proxy --upstream "$U" --listen "127.0.0.1:$PROXY_PORT" --sandbox-helpers \
    --json "$WORK/ours-report.json" >"$WORK/ours.log" 2>&1 &
PIDS+=($!)
wait_up "http://127.0.0.1:$PROXY_PORT/_conformance/report"
"$FLOOR" "127.0.0.1:$FLOOR_PORT" "$U" >"$WORK/floor.log" 2>&1 &
PIDS+=($!)
wait_up "http://127.0.0.1:$FLOOR_PORT/webhook/public-key"
if [ -n "$BEFORE" ]; then
    RUST_LOG=warn "$BEFORE" proxy --upstream "$U" --listen "127.0.0.1:$BEFORE_PORT" --sandbox-helpers >"$WORK/before.log" 2>&1 &
    PIDS+=($!)
    wait_up "http://127.0.0.1:$BEFORE_PORT/_conformance/report"
fi
if [ "$PRISM" = 1 ]; then
    "$PRISM_BIN" proxy src/generated/openapi.json "$U" --host 127.0.0.1 --port "$PRISM_PORT" --errors false \
        >"$WORK/prism.log" 2>&1 &
    PIDS+=($!)
    wait_up "http://127.0.0.1:$PRISM_PORT/webhook/public-key"
fi
TOKEN=$("$SANDBOX" token --project bench-proxy --data "$WORK/data")
quote_lua "$TOKEN" "$WORK/quote.lua"
# Each target answers a quote before it is measured (and the proxy checks it: no violation expected).
for port in "$SANDBOX_PORT" "$PROXY_PORT" "$FLOOR_PORT" ${BEFORE:+"$BEFORE_PORT"} $([ "$PRISM" = 1 ] && echo "$PRISM_PORT"); do
    curl -sf -o /dev/null -X POST "http://127.0.0.1:$port/bridge/quote/user" -H "Authorization: Bearer $TOKEN" \
        -H 'content-type: application/json' -d "$QUOTE_BODY"
done

echo "== wrk: $THREADS thread(s), $CONNECTIONS connections, ${DURATION}s per run, POST /bridge/quote/user on 127.0.0.1"
n=1
run direct-1 "$U/bridge/quote/user" "$WORK/quote.lua"
proxied() { # name port
    run "$1" "http://127.0.0.1:$2/bridge/quote/user" "$WORK/quote.lua"
    n=$((n + 1))
    run "direct-$n" "$U/bridge/quote/user" "$WORK/quote.lua"
}
for round in $(seq 1 "$ROUNDS"); do
    proxied "ours-$round" "$PROXY_PORT"
    proxied "floor-$round" "$FLOOR_PORT"
    if [ -n "$BEFORE" ]; then proxied "before-$round" "$BEFORE_PORT"; fi
done
if [ "$PRISM" = 1 ]; then
    proxied prism "$PRISM_PORT"
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
added = {}
for i, (name, rps, p50, p99, requests) in enumerate(rows):
    if name.startswith("direct"):
        print(f"{name:<10} {float(rps):>11.1f} {ms(p50):>8.3f} {ms(p99):>8.3f} {requests:>9}")
        continue
    before, after = rows[i - 1], rows[i + 1]
    base_rps = (float(before[1]) + float(after[1])) / 2
    base_p50 = (ms(before[2]) + ms(after[2])) / 2
    extra, ratio = ms(p50) - base_p50, float(rps) / base_rps
    added.setdefault(name.split("-")[0], []).append((extra, ratio))
    print(f"{name:<10} {float(rps):>11.1f} {ms(p50):>8.3f} {ms(p99):>8.3f} {requests:>9} {extra:>+13.3f} {ratio:>10.3f}x")
print()
for name, runs in added.items():
    extra = sum(e for e, _ in runs) / len(runs)
    ratio = sum(r for _, r in runs) / len(runs)
    print(f"{name:<6} mean over {len(runs)} run(s): p50 {extra:+.3f} ms, throughput {ratio:.3f}x of direct")
PY
VIOLATIONS=$(curl -sf "http://127.0.0.1:$PROXY_PORT/_conformance/report" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["requests"], "exchanges checked,", r["violations"], "violations")')
echo
echo "ours: $VIOLATIONS"
machine_line
