# Shared by the wrk benchmarks (scripts/bench-http.sh, scripts/bench-proxy.sh); sourced, not run. Defines:
#   need_tools              wrk and curl are installed, or exit 2
#   TARGET_DIR              cargo's target directory
#   WORK, PIDS, cleanup     a temporary directory and the PIDs of the servers started; the EXIT trap stops them
#                           (by PID) and removes WORK (a script that needs more at exit sets its own trap that
#                           calls cleanup)
#   wait_up URL             polls until URL answers (30 s at most)
#   run NAME URL [LUA]      one wrk run (THREADS, CONNECTIONS, DURATION) appended to $WORK/results as
#                           "NAME requests/s p50 p99 requests"; exits when an answer was not 2xx
#   machine_line            the machine, one line
# Loopback only: the scripts give only 127.0.0.1 URLs.

need_tools() {
    command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
    command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 2; }
}

TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

wait_up() { # url
    for _ in $(seq 1 300); do
        if curl -s -o /dev/null "$1"; then return 0; fi
        sleep 0.1
    done
    echo "server at $1 did not come up" >&2
    exit 1
}

run() { # name url [lua]
    local name=$1 url=$2 script=${3:-}
    local out="$WORK/$name.txt"
    local args=(-t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency)
    if [ -n "$script" ]; then args+=(-s "$script"); fi
    wrk "${args[@]}" "$url" >"$out"
    if grep -q "Non-2xx" "$out"; then
        echo "$name: some answers were not 2xx:" >&2
        cat "$out" >&2
        exit 1
    fi
    local rps p50 p99 requests
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
    p50=$(awk '$1 == "50%" {print $2}' "$out")
    p99=$(awk '$1 == "99%" {print $2}' "$out")
    requests=$(awk '/requests in/ {print $1}' "$out")
    echo "$name $rps $p50 $p99 $requests" >>"$WORK/results"
}

machine_line() {
    echo "machine: $(nproc) cores, $(awk '/model name/ {$1=$2=$3=""; print; exit}' /proc/cpuinfo | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# The quote both benchmarks send, and a wrk script that posts it with a bearer token: quote_lua TOKEN FILE.
QUOTE_BODY='{"token":"USDC","chainIn":"ETHEREUM","chainOut":"BASE","amount":"100","mode":"pay","depositor":"0x1111111111111111111111111111111111111111","recipient":"0x2222222222222222222222222222222222222222"}'
quote_lua() { # token file
    cat >"$2" <<LUA
wrk.method = "POST"
wrk.body = '$QUOTE_BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $1"
LUA
}
