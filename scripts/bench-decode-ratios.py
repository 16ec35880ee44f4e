#!/usr/bin/env python3
"""Typed/`Value` ratios of the decode bench, robust to load that comes and goes: runs the criterion bench binaries
given (for example a build before a change and one after) in turn, ROUNDS times, each run short (every case
`--warm-up-time 1 --measurement-time 2`), and prints per binary and case the median over the rounds of the ratio
typed mean / `Value` mean of the same run (the two are measured a few seconds apart, so a ratio is what one
load made of both), with the lowest and highest ratio seen.

    cargo bench -p bridge-contract --bench decode --no-run      # prints the bench binary's path
    python3 scripts/bench-decode-ratios.py <binary> [<other binary> ...]
    ROUNDS=9 FILTER='^decode-(bridge-record|quote-response)' python3 scripts/bench-decode-ratios.py <binary>

docs/performance.md, section 1a, reports its output.
"""
import os
import re
import statistics
import subprocess
import sys

UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def run(binary, filter_):
    """{group: {"typed": ns, "value": ns}} of one run."""
    out = subprocess.run(
        [binary, "--bench", "--warm-up-time", "1", "--measurement-time", "2", filter_],
        check=True, capture_output=True, text=True,
    ).stdout
    means, name = {}, None
    for line in out.splitlines():
        named = re.match(r"^(\S+)/(typed|value)\s*(time:.*)?$", line.strip())
        if named:
            name = (named.group(1), named.group(2))
            line = named.group(3) or ""
        timed = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if timed and name:
            group, kind = name
            means.setdefault(group, {})[kind] = float(timed.group(1)) * UNITS[timed.group(2)]
            name = None
    return means


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    rounds = int(os.environ.get("ROUNDS", "7"))
    filter_ = os.environ.get("FILTER", "^decode-")
    ratios = {b: {} for b in binaries}
    for r in range(rounds):
        for b in binaries:
            for group, m in run(b, filter_).items():
                if "typed" in m and "value" in m:
                    ratios[b].setdefault(group, []).append(m["typed"] / m["value"])
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    for b in binaries:
        print(f"{b} (median of {rounds} runs, typed / Value; lowest-highest):")
        for group, values in sorted(ratios[b].items()):
            print(f"  {group:28} {statistics.median(values):.2f}  ({min(values):.2f}-{max(values):.2f})")


if __name__ == "__main__":
    main()
