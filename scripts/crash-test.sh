#!/usr/bin/env bash
# Crash test: concurrent clients commit quotes and write events, the sandbox is killed with SIGKILL mid-way and
# restarted on the same data directory; every acknowledged commit and event must be there, and the event feed
# must have no gap and no duplicate. Details: scripts/crash_test.py. Loopback only, bounded.
#
#   scripts/crash-test.sh                          # ROUNDS=3 CLIENTS=8 LOAD_SECONDS=4
#   ROUNDS=10 CLIENTS=16 scripts/crash-test.sh     # longer
#   PROFILE=debug scripts/crash-test.sh            # with the debug build (no release build needed)
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
if [ "$PROFILE" = release ]; then
    cargo build --release -q -p bridge-sandbox --bin bridge-sandbox
else
    cargo build -q -p bridge-sandbox --bin bridge-sandbox
fi
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SANDBOX="$TARGET_DIR/$PROFILE/bridge-sandbox" DATA="$WORK/data" timeout 600 python3 scripts/crash_test.py
