#!/usr/bin/env bash
# Instruction counts of `bridge-conformance proxy` per exchange, repeatable on a noisy machine: the proxy runs
# under `valgrind --tool=callgrind` in front of the sandbox; WARMUP quotes are sent (connections, validators,
# allocator warm), the counters are zeroed (callgrind_control -z), N quotes are sent one after the other on one
# keep-alive connection (scripts/drive-quotes.py), and the counters are dumped (callgrind_control -d). The dump
# holds the work of exactly N exchanges; its total divided by N is the figure. The floor (a pass-through proxy
# with no checks, crates/bridge-conformance/examples/bare_proxy.rs) is measured the same way.
#
#   scripts/profile-proxy.sh                       # N=2000 WARMUP=200; writes target/profile-proxy/
#   callgrind_annotate target/profile-proxy/ours.out | head -60
#   CONFORMANCE=/path/to/other/bridge-conformance scripts/profile-proxy.sh   # another build (before/after)
#
# Needs valgrind (Debian: apt-get install valgrind) and python3. Loopback only; everything started is stopped.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-2000}
WARMUP=${WARMUP:-200}
SANDBOX_PORT=${SANDBOX_PORT:-18590}
PROXY_PORT=${PROXY_PORT:-18591}
FLOOR_PORT=${FLOOR_PORT:-18593}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 2; }

source scripts/bench-lib.sh
echo "== building (release)"
cargo build --release -q -p bridge-sandbox --bin bridge-sandbox
cargo build --release -q -p bridge-conformance --bin bridge-conformance --example bare_proxy
SANDBOX="$TARGET_DIR/release/bridge-sandbox"
CONFORMANCE=${CONFORMANCE:-$TARGET_DIR/release/bridge-conformance}
FLOOR="$TARGET_DIR/release/examples/bare_proxy"
OUT="$TARGET_DIR/profile-proxy"
mkdir -p "$OUT"

RUST_LOG=warn "$SANDBOX" serve --listen "127.0.0.1:$SANDBOX_PORT" --data "$WORK/data" --clock manual >"$WORK/sandbox.log" 2>&1 &
PIDS+=($!)
U="http://127.0.0.1:$SANDBOX_PORT"
wait_up "$U/webhook/public-key"
TOKEN=$("$SANDBOX" token --project profile-proxy --data "$WORK/data")

profile() { # name port command...
    local name=$1 port=$2
    shift 2
    rm -f "$OUT/$name.out"*
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.out" "$@" >"$WORK/$name.log" 2>&1 &
    local pid=$!
    PIDS+=($pid)
    wait_up "http://127.0.0.1:$port/webhook/public-key"
    python3 scripts/drive-quotes.py "$port" "$TOKEN" "$WARMUP" >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    python3 scripts/drive-quotes.py "$port" "$TOKEN" "$N" >/dev/null
    callgrind_control -d "$pid" >/dev/null 2>&1
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    # The dump made by -d is $name.out.1 (the file written at exit holds only the stop).
    mv "$OUT/$name.out.1" "$OUT/$name.out"
    local total
    total=$(awk '/^summary:/ {print $2}' "$OUT/$name.out")
    printf '%-6s %12d instructions for %d quotes: %8d a quote\n' "$name" "$total" "$N" $((total / N))
}

echo "== callgrind: $N quotes after $WARMUP warm-up, one keep-alive connection"
RUST_LOG=warn profile ours "$PROXY_PORT" "$CONFORMANCE" proxy --upstream "$U" --listen "127.0.0.1:$PROXY_PORT" --sandbox-helpers
profile floor "$FLOOR_PORT" "$FLOOR" "127.0.0.1:$FLOOR_PORT" "$U"
echo "callgrind files: $OUT/{ours,floor}.out (callgrind_annotate them)"
