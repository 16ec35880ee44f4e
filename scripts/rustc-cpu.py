#!/usr/bin/env python3
"""A RUSTC_WRAPPER that notes the CPU time (user + system) of every rustc run, by crate, so that a build's CPU
time can be split between the crates it compiles (docs/performance.md, "Build cost"):

    rm -rf target && RUSTC_CPU_LOG=/tmp/cpu.txt RUSTC_WRAPPER=$PWD/scripts/rustc-cpu.py cargo build
    python3 scripts/rustc-cpu.py --sum /tmp/cpu.txt          # seconds per crate, most first, and the total

Each rustc run appends `<seconds> <crate name>` to RUSTC_CPU_LOG (default /tmp/rustc-cpu.txt); the wrapper runs
rustc with the arguments cargo gives and exits with its status.
"""
import collections
import os
import resource
import subprocess
import sys


def summarise(path):
    seconds = collections.Counter()
    for line in open(path):
        value, _, crate = line.strip().partition(" ")
        seconds[crate or "?"] += float(value)
    for crate, value in seconds.most_common():
        print(f"{value:7.2f} {crate}")
    print(f"{sum(seconds.values()):7.2f} total")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--sum":
        return summarise(sys.argv[2])
    args = sys.argv[1:]
    # The jobserver's file descriptors (CARGO_MAKEFLAGS) are inherited, as cargo means them to be.
    status = subprocess.run(args, close_fds=False).returncode
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    crate = args[args.index("--crate-name") + 1] if "--crate-name" in args else ""
    with open(os.environ.get("RUSTC_CPU_LOG", "/tmp/rustc-cpu.txt"), "a") as log:
        log.write(f"{usage.ru_utime + usage.ru_stime:.3f} {crate}\n")
    sys.exit(status)


if __name__ == "__main__":
    main()
