#!/usr/bin/env bash
# Instruction counts per decode of a quote request body (crates/bridge-server/examples/decode_count.rs) under
# `valgrind --tool=callgrind`, for the server's decoder (the one-pass path), the engine alone and serde, on the
# valid and the invalid body of the criterion benchmark: each case runs at N1 and N2 decodes, and the difference
# of the totals divided by N2 - N1 is the figure (start-up, the tables and the allocator's first pages cancel).
# Deterministic, so it compares the decoders on a loaded machine where criterion's times wander.
#
#   scripts/profile-decoder.sh              # N1=200 N2=2200
#
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

N1=${N1:-200}
N2=${N2:-2200}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
cargo build --release -q -p bridge-server --example decode_count
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
BIN="$TARGET_DIR/release/examples/decode_count"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

total() { # decoder input mode n
    valgrind --tool=callgrind --callgrind-out-file="$WORK/out" "$BIN" "$@" >/dev/null 2>"$WORK/log"
    awk '/^summary:/ {print $2}' "$WORK/out"
}

printf '%-8s %-8s %-6s %14s\n' input mode decoder 'instr/decode'
for input in valid invalid; do
    for mode in first all; do
        for decoder in decoder engine serde; do
            if [ "$decoder" = serde ] && [ "$mode" = all ]; then continue; fi
            a=$(total "$decoder" "$input" "$mode" "$N1")
            b=$(total "$decoder" "$input" "$mode" "$N2")
            printf '%-8s %-8s %-6s %14d\n' "$input" "$mode" "$decoder" $(((b - a) / (N2 - N1)))
        done
    done
done
