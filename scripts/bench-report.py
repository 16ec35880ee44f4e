#!/usr/bin/env python3
"""Prints the criterion results of the last `cargo bench` run as ratios to their in-run baselines.

    python3 scripts/bench-report.py [target/criterion]

Baselines (docs/performance.md):
  decode-*, encode-*  typed / value                    (benches/decode.rs)
  quote-request-*     each / serde                     (crates/bridge-server/benches/decode_request.rs)
  feed-page-50        CASE/1000000 / CASE/1000         (crates/bridge-sandbox/benches/feed.rs)
  auth                each / jwt-only                  (crates/bridge-sandbox/benches/auth.rs)
Times are criterion's point estimates of the mean (the 95 % interval in brackets).
"""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
if not root.is_dir():
    sys.exit(f"no criterion results in {root}: run cargo bench first")


def estimates(path):
    e = json.loads((path / "new" / "estimates.json").read_text())["mean"]
    return e["point_estimate"], e["confidence_interval"]["lower_bound"], e["confidence_interval"]["upper_bound"]


def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


results = {}
for est in root.glob("**/new/estimates.json"):
    bench = est.parent.parent
    bench_json = json.loads((est.parent / "benchmark.json").read_text())
    results[(bench_json["group_id"], bench_json.get("function_id"), bench_json.get("value_str"))] = estimates(bench)

groups = sorted({g for g, _, _ in results})
for group in groups:
    rows = sorted((k, v) for k, v in results.items() if k[0] == group)
    print(f"\n{group}")
    for (g, function, value), (mean, lo, hi) in rows:
        name = "/".join(x for x in (function, value) if x)
        if group.startswith(("decode-", "encode-")):
            base = results.get((g, "value", None))
            label = "typed/value"
        elif group.startswith("quote-request-"):
            base = results.get((g, "serde", None))
            label = "÷ serde"
        elif group.startswith("feed-page"):
            base = results.get((g, function, "1000"))
            label = "÷ same case at 1,000"
        elif group == "auth":
            base = results.get((g, "jwt-only", None))
            label = "÷ jwt-only"
        else:
            base, label = None, ""
        ratio = f"{mean / base[0]:6.2f}  ({label})" if base else ""
        print(f"  {name:28} {fmt(mean):>10}  [{fmt(lo)} – {fmt(hi)}]  {ratio}")
    if group.startswith("quote-request-"):
        schema = results.get((group, "jsonschema", None))
        for name in ("decoder-first", "decoder-all", "engine-first"):
            measured = results.get((group, name, None))
            if measured and schema:
                print(f"  {name + ' ÷ jsonschema':28} {measured[0] / schema[0]:6.2f}")
