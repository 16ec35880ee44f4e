#!/usr/bin/env bash
# Multi-instance crash test: three sandbox instances on one throw-away PostgreSQL, writers spread over them, one
# instance SIGKILLed and restarted under load each round; every acknowledged commit has its bridge and exactly one
# BRIDGE_PENDING event, the feed has no gap or duplicate, every event is delivered. Details:
# scripts/crash_test_multi.py. Needs PostgreSQL's binaries (apt-get install postgresql). Loopback only, bounded.
#
#   scripts/crash-test-multi.sh                          # ROUNDS=2 CLIENTS=6 LOAD_SECONDS=4
#   ROUNDS=6 CLIENTS=12 scripts/crash-test-multi.sh      # longer
#   PROFILE=debug scripts/crash-test-multi.sh            # with the debug build
#   RETAIN=2s scripts/crash-test-multi.sh                # with `--retain 2s`: what is missing must have been purged
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
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
SANDBOX="$TARGET_DIR/$PROFILE/bridge-sandbox" WORK="$WORK" timeout 900 python3 scripts/crash_test_multi.py
