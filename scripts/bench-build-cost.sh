#!/usr/bin/env bash
# Build cost for users: a clean debug build of a small program that decodes a webhook envelope with the contract's
# types (`bridge-contract`, default features), against the same program with only serde + serde_json (the
# baseline, same run). Prints both times and their ratio (docs/performance.md, "Build cost").
#
# Both wall time and CPU time (user + system of cargo and rustc) are reported: on a shared machine the CPU time is
# the steadier figure. CONTRACT=<checkout> measures another checkout's bridge-contract (to compare with a base).
#
#   scripts/bench-build-cost.sh            # ROUNDS=3: each build three times, alternating, the medians reported
#   CONTRACT=/path/to/other/checkout scripts/bench-build-cost.sh
set -euo pipefail
root=$(cd "${CONTRACT:-$(dirname "$0")/..}" && pwd)
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

serde_version=$(cargo metadata --manifest-path "$root/Cargo.toml" --format-version 1 --locked 2>/dev/null \
    | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="serde_json"))')

make_crate() { # name, dependency lines, main.rs
    mkdir -p "$work/$1/src"
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n%s\n\n[workspace]\n' "$1" "$2" \
        > "$work/$1/Cargo.toml"
    printf '%s\n' "$3" > "$work/$1/src/main.rs"
}

make_crate typed "bridge-contract = { path = \"$root\" }
serde_json = \"=$serde_version\"" '
fn main() {
    let text = std::io::read_to_string(std::io::stdin()).unwrap();
    let envelope: bridge_contract::WebhookEnvelope = serde_json::from_str(&text).unwrap();
    println!("{}", serde_json::to_string(&envelope).unwrap());
}'
make_crate baseline "serde = { version = \"1\", features = [\"derive\"] }
serde_json = \"=$serde_version\"" '
#[derive(serde::Deserialize, serde::Serialize)]
struct Envelope { event: serde_json::Value, ts: i64, signature: String }
fn main() {
    let text = std::io::read_to_string(std::io::stdin()).unwrap();
    let envelope: Envelope = serde_json::from_str(&text).unwrap();
    println!("{}", serde_json::to_string(&envelope).unwrap());
}'
# The same lock file versions as the workspace where they overlap (the typed crate resolves against it).
cp "$root/Cargo.lock" "$work/typed/Cargo.lock"

build() { # crate -> "wall cpu" seconds of a clean build
    rm -rf "$work/$1/target"
    python3 - "$work/$1" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(["cargo", "build", "-q"], cwd=sys.argv[1], check=True, stdout=sys.stderr)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall:.2f} {usage.ru_utime + usage.ru_stime:.2f}")
PY
}

typed=(); baseline=()
for i in $(seq 1 "$rounds"); do
    baseline+=("$(build baseline)")
    typed+=("$(build typed)")
    echo "round $i/$rounds: typed ${typed[-1]}, baseline ${baseline[-1]} (wall cpu, s)" >&2
done
python3 - "$root" "${typed[*]}" "${baseline[*]}" <<'PY'
import statistics, sys
def medians(text):
    values = [float(x) for x in text.split()]
    return statistics.median(values[0::2]), statistics.median(values[1::2])
(tw, tc), (bw, bc) = medians(sys.argv[2]), medians(sys.argv[3])
n = len(sys.argv[2].split()) // 2
print(f"bridge-contract at {sys.argv[1]} (medians of {n} clean debug builds):")
print(f"  wall: typed {tw:.1f} s, serde + serde_json {bw:.1f} s, ratio {tw / bw:.2f}")
print(f"  cpu:  typed {tc:.1f} s, serde + serde_json {bc:.1f} s, ratio {tc / bc:.2f}")
PY
