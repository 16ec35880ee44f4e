#!/usr/bin/env bash
# Instructions and L1 instruction-cache misses per decode of each benchmark fixture, typed and as a
# `serde_json::Value` (the baseline), under callgrind with its cache simulation: repeatable on a noisy machine,
# where criterion's wall-clock ratios move by ~10 % (docs/performance.md, "Where the time goes").
#
# The example `decode_profile` decodes one fixture N times in one function; callgrind collects only inside it
# (`--toggle-collect`), after WARMUP decodes outside it that warm the caches and the allocator, so the counts are
# those of N decodes in a loop, as criterion runs them. Prints one line per fixture and kind: instructions, L1i
# misses and branch mispredictions per decode, and the typed/value ratio of instructions.
#
#   scripts/profile-decode.sh                    # N=200, every fixture; writes target/profile-decode/
#   BIN=/path/to/other/decode_profile scripts/profile-decode.sh    # another build (before/after)
#   FIXTURES="quote-response bridge-record" N=1000 scripts/profile-decode.sh
#   callgrind_annotate --inclusive=yes target/profile-decode/quote-response-typed.out | head -60
#
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-200}
FIXTURES=${FIXTURES:-"bridge-record quote-response events-page-50 history-page-50"}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
if [ -z "${BIN:-}" ]; then
    cargo build --release -q --example decode_profile
    BIN="$TARGET_DIR/release/examples/decode_profile"
fi
OUT="${OUT:-$TARGET_DIR/profile-decode}"
mkdir -p "$OUT"

# Totals of one callgrind file: Ir I1mr Bcm Bim.
totals() {
    awk '/^events:/ {for (i = 2; i <= NF; i++) name[i] = $i}
         /^summary:/ {for (i = 2; i <= NF; i++) v[name[i]] = $i}
         END {printf "%d %d %d %d\n", v["Ir"], v["I1mr"], v["Bcm"], v["Bim"]}' "$1"
}

printf '%-16s %-6s %12s %10s %12s %8s\n' fixture kind "Ir/decode" "I1mr/dec" "Bmiss/dec" "Ir ratio"
for fixture in $FIXTURES; do
    declare -A ir=()
    for kind in value typed; do
        file="$OUT/$fixture-$kind.out"
        valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --toggle-collect='*decode_n*' \
            --callgrind-out-file="$file" "$BIN" "$fixture" "$kind" "$N" >/dev/null 2>"$OUT/$fixture-$kind.log"
        read -r i i1 bc bi < <(totals "$file")
        ir[$kind]=$i
        ratio=""
        [ "$kind" = typed ] && ratio=$(python3 -c "print(f'{$i / ${ir[value]}:.3f}')")
        printf '%-16s %-6s %12d %10.1f %12.1f %8s\n' "$fixture" "$kind" $((i / N)) \
            "$(python3 -c "print($i1 / $N)")" "$(python3 -c "print(($bc + $bi) / $N)")" "$ratio"
    done
done
echo "callgrind files: $OUT/<fixture>-<kind>.out"
