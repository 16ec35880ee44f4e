#!/usr/bin/env bash
# The retention purge (`serve --retain`) on a throw-away PostgreSQL server (or SQLite): its rate, and what it does
# to quote latency, in one run. Loopback only; bounded; the servers are stopped at the end (by their PIDs).
#
#   1. PostgreSQL (initdb in a temporary directory, a free port of 127.0.0.1, fsync on, defaults), or with
#      BACKEND=sqlite a data directory; the sandbox started once to migrate the store and commit one quote over
#      HTTP (its quote, bridge and BRIDGE_PENDING event are the templates of step 2), then stopped;
#   2. ROWS_PER_KIND rows of each of five kinds written with SQL (generate_series, not HTTP): copies of that quote
#      (committed), of its bridge as EXECUTED (ended), of its event, a delivered webhook delivery per event and one
#      attempt each (5 x 200,000 = 1,000,000 rows by default), written a day ago as far as `stored_ms` says;
#   3. wrk posting quotes (POST /bridge/quote/user: JWT, decode, pricing, one durable insert) for DURATION seconds
#      three times:
#      before: the sandbox with `--retain forever` (nothing is purged);
#      during: the sandbox restarted with `--retain $RETAIN` (a pass every twentieth of it), once its purge has
#              deleted its first rows (the script says if the purge ended before the run did);
#      after:  the same sandbox, once every row is purged;
#   4. prints each run's requests/s, p50 and p99 and their ratios to `before`, the purge's rate (rows/s: the
#      rows of the pass over its duration, from the sandbox's log line `retention purge: deleted ...`), and how
#      many lock waits over 20 ms PostgreSQL logged (log_lock_waits) during the whole run.
#
#   scripts/bench-retention.sh                         # ROWS_PER_KIND=200000 DURATION=20 CONNECTIONS=8 RETAIN=60s
#   ROWS_PER_KIND=20000 DURATION=5 scripts/bench-retention.sh   # a quick run
#   SANDBOX_BIN=target/debug/bridge-sandbox scripts/bench-retention.sh   # another build (default: release)
#   LOAD=0 scripts/bench-retention.sh                  # the purge alone, no quote load (its rate unloaded)
#   BACKEND=sqlite scripts/bench-retention.sh          # the same on SQLite (the rows written with Python's sqlite3)
#
# Needs wrk and PostgreSQL's binaries (Debian: apt-get install wrk postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS_PER_KIND=${ROWS_PER_KIND:-200000}
DURATION=${DURATION:-20}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-1}
RETAIN=${RETAIN:-60s}
LOAD=${LOAD:-1}
SANDBOX_PORT=${SANDBOX_PORT:-18490}

source scripts/bench-lib.sh
need_tools

if [ -z "${SANDBOX_BIN:-}" ]; then
    echo "== building (release)"
    cargo build --release -q -p bridge-sandbox --bin bridge-sandbox
fi
SANDBOX="${SANDBOX_BIN:-$TARGET_DIR/release/bridge-sandbox}"
echo "== sandbox: $SANDBOX"

BACKEND=${BACKEND:-postgres}
if [ "$BACKEND" = postgres ]; then
    INITDB=$(command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | sort | tail -1)
    PGBIN=$(dirname "$(readlink -f "$INITDB")")
    AS=()
    if [ "$(id -u)" = 0 ]; then AS=(runuser -u postgres --); chmod 755 "$WORK"; mkdir -p "$WORK/pg"; chown postgres "$WORK/pg"; fi
    PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "${AS[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U sandbox --auth=trust -E UTF8 >/dev/null
    # Every wait for a lock longer than 20 ms is logged (log_lock_waits; deadlock_timeout sets the threshold):
    # counted at the end, the direct evidence of whether the purge holds a lock writers wait for.
    "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -o "-p $PG_PORT -h 127.0.0.1 -k $WORK/pg -c log_lock_waits=on -c deadlock_timeout=20ms" \
        -l "$WORK/pg/log" -w start >/dev/null
    stop_pg() { "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m fast -w stop >/dev/null || true; }
    trap 'stop_pg; cleanup' EXIT
    "${AS[@]}" "$PGBIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U sandbox bench
    URL="postgres://sandbox@127.0.0.1:$PG_PORT/bench"
    STORE=(--database-url "$URL")
    PSQL=("$PGBIN/psql" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U sandbox bench)
    echo "== PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (fsync on, defaults)"
else
    STORE=(--data "$WORK/data")
    echo "== SQLite in $WORK/data"
fi

U="http://127.0.0.1:$SANDBOX_PORT"
start_sandbox() { # flags...
    RUST_LOG=warn,bridge_sandbox::operate::workers=info "$SANDBOX" serve --listen "127.0.0.1:$SANDBOX_PORT" \
        "${STORE[@]}" --clock manual "$@" >>"$WORK/sandbox.log" 2>&1 &
    SANDBOX_PID=$!
    PIDS+=("$SANDBOX_PID")
    wait_up "$U/livez"
}
stop_sandbox() {
    kill -TERM "$SANDBOX_PID"
    wait "$SANDBOX_PID" || true
}
# One quote committed over HTTP: the rows it leaves (a quote, a bridge, its BRIDGE_PENDING event) are the
# templates the bulk rows are copied from, so each bulk row is the size and shape the sandbox writes.
start_sandbox --retain forever
TOKEN=$("$SANDBOX" token --project bench-retention "${STORE[@]}")
quote_lua "$TOKEN" "$WORK/quote.lua"
QID=$(curl -sf -X POST "$U/bridge/quote/user" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d "$QUOTE_BODY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["quoteId"])')
curl -sf -o /dev/null -X POST "$U/bridge/quote/commit/$QID" -H "Authorization: Bearer $TOKEN"
stop_sandbox

STAMP=$(python3 -c "import time; print(int(time.time() * 1000) - 86400000)")
N=$ROWS_PER_KIND
TOTAL=$((5 * N + 2))
echo "== writing $((5 * N)) rows with SQL ($N each: quotes, EXECUTED bridges, events, delivered deliveries, attempts)"
echo "   copies of the quote, bridge and event one commit wrote; stored a day ago (stored_ms), all purgeable"
started=$(date +%s.%N)
# Feed positions after the template event's; outbox ids far past the sequence's (the attempts name them). The
# templates are made as old (the purge walks events by position: a young first event would stop it there); the
# template quote and event are purged too, the bridge (PENDING) is not.
ROWS_SQL="
UPDATE quotes SET stored_ms = $STAMP;
UPDATE events SET stored_ms = $STAMP;
INSERT INTO quotes (id, project, body, mode, created_ms, expires_ms, committed, stored_ms)
  SELECT 'bulk-q-' || g, t.project, t.body, t.mode, t.created_ms, t.expires_ms, TRUE, $STAMP
  FROM (SELECT * FROM quotes LIMIT 1) t, generate_series(1, $N) g;
INSERT INTO bridges (id, project, record, rejections, state, created_ms, updated_ms, next_ms, webhook_url, plan,
    version, ended, stored_ms)
  SELECT 'bulk-b-' || g, t.project, replace(t.record, '\"PENDING\"', '\"EXECUTED\"'), t.rejections, 'EXECUTED',
    t.created_ms, t.updated_ms, NULL, 'http://127.0.0.1:9/', t.plan, t.version + 3, TRUE, $STAMP
  FROM (SELECT * FROM bridges LIMIT 1) t, generate_series(1, $N) g;
INSERT INTO events (seq, id, project, created_ms, body, webhook_url, latest_ms, stored_ms)
  SELECT 1 + g, 'bulk-e-' || g, t.project, t.created_ms, t.body, 'http://127.0.0.1:9/', t.latest_ms, $STAMP
  FROM (SELECT * FROM events LIMIT 1) t, generate_series(1, $N) g;
INSERT INTO outbox (id, event_id, project, url, attempts, next_ms, delivered)
  SELECT 1000000000 + g, 'bulk-e-' || g, t.project, 'http://127.0.0.1:9/', 1, NULL, TRUE
  FROM (SELECT * FROM events LIMIT 1) t, generate_series(1, $N) g;
INSERT INTO delivery_attempts (outbox_id, event_id, project, url, attempt, at_ms, status, delivered, latency_ms,
    body_start, stored_ms)
  SELECT 1000000000 + g, 'bulk-e-' || g, t.project, 'http://127.0.0.1:9/', 1, t.created_ms, 200, TRUE, 3, 'ok', $STAMP
  FROM (SELECT * FROM events LIMIT 1) t, generate_series(1, $N) g;
"
if [ "$BACKEND" = postgres ]; then
    "${PSQL[@]}" -c "$ROWS_SQL" -c "UPDATE feed_head SET position = 1 + $N" -c "VACUUM ANALYZE"
    SIZE=$("${PSQL[@]}" -tAc "SELECT pg_size_pretty(pg_database_size('bench'))")
else
    # SQLite has no generate_series table function built in: the same rows from a recursive CTE.
    python3 - "$WORK/data/sandbox.db" "$N" "$ROWS_SQL" <<'PY'
import re, sqlite3, sys
db, n, text = sys.argv[1], int(sys.argv[2]), sys.argv[3]
conn = sqlite3.connect(db)
series = f"(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {n}) SELECT g FROM s) g"
text = re.sub(r"generate_series\(1, \d+\) g", lambda _: series, text)
with conn:
    conn.executescript(text.replace("TRUE", "1"))
conn.execute("VACUUM")
conn.execute("ANALYZE")
PY
    SIZE="$(du -sh "$WORK/data/sandbox.db" | cut -f1)B"
fi
echo "   written in $(python3 -c "print(f'{$(date +%s.%N) - $started:.1f}')") s; database $SIZE"

purged() { curl -sf "$U/metrics" | awk '/^bridge_sandbox_retention_purged_total/ {s += $2} END {printf "%d", s}'; }
load() { # name: one wrk run, its start and end (Unix seconds) appended to $WORK/windows
    local from
    from=$(date +%s.%N)
    if [ "$LOAD" = 1 ]; then run "$1" "$U/bridge/quote/user" "$WORK/quote.lua"; fi
    echo "$1 $from $(date +%s.%N)" >>"$WORK/windows"
}

[ "$LOAD" != 1 ] || echo "== wrk: $THREADS thread(s), $CONNECTIONS connections, ${DURATION}s per run; --retain $RETAIN"
start_sandbox --retain forever
[ "$LOAD" != 1 ] || wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s "$WORK/quote.lua" "$U/bridge/quote/user" >/dev/null # warm-up
load before
stop_sandbox
start_sandbox --retain "$RETAIN"
for _ in $(seq 1 1200); do [ "$(purged)" != 0 ] && break; sleep 0.05; done
[ "$(purged)" != 0 ] || { echo "the purge did not begin within 60 s" >&2; exit 1; }
load during
during_end=$(purged)
for _ in $(seq 1 6000); do [ "$(purged)" -ge "$TOTAL" ] && break; sleep 0.1; done
load after
[ "$(purged)" -ge "$TOTAL" ] || { echo "not every row was purged: $(purged) of $TOTAL" >&2; exit 1; }

echo
if [ "$LOAD" = 1 ]; then
    [ "$during_end" -lt "$TOTAL" ] || echo "note: the purge ended before the 'during' run did: that run is partly after it"
    printf '%-8s %12s %10s %10s %10s %12s %10s %10s\n' run 'requests/s' p50 p99 requests 'rps ratio' 'p50 ratio' 'p99 ratio'
    python3 - "$WORK/results" <<'PY'
import sys
def ms(text):
    for unit, factor in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
rows = [line.split() for line in open(sys.argv[1])]
base = rows[0]
for name, rps, p50, p99, requests in rows:
    print(f"{name:<8} {rps:>12} {p50:>10} {p99:>10} {requests:>10} {float(rps) / float(base[1]):>12.3f} "
          f"{ms(p50) / ms(base[2]):>10.2f} {ms(p99) / ms(base[3]):>10.2f}")
PY
fi
python3 - "$WORK/sandbox.log" "$TOTAL" <<'PY'
import re, sys
total = int(sys.argv[2])
for line in open(sys.argv[1]):
    if "retention purge: deleted" in line:
        counts = dict((k, int(v)) for k, v in re.findall(r"(\w+): (\d+)", line.split("PurgeCounts", 1)[1]))
        rows = sum(counts.values())
        took = float(re.search(r"took_ms=([\d.]+)", line).group(1)) / 1e3
        if rows >= total // 2:
            print(f"purge: {rows:,} rows in {took:.1f} s: {rows / took:,.0f} rows/s ({counts})")
PY
if [ "$BACKEND" = postgres ]; then
    echo "lock waits over 20 ms logged by PostgreSQL during the whole run: $(grep -c 'still waiting for' "$WORK/pg/log" || true)"
    # Which statements waited, on what, in which run (or between runs): the waiting statement follows each wait
    # (STATEMENT: ...); the time is the log line's (log_line_prefix %m, UTC).
    python3 - "$WORK/pg/log" "$WORK/windows" <<'PY'
import collections, datetime, re, sys
windows = [(name, float(a), float(b)) for name, a, b in (line.split() for line in open(sys.argv[2]))]
def run_at(t):
    return next((name for name, a, b in windows if a <= t <= b), "between runs")
waits, pending = collections.Counter(), None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC .*still waiting for (\w+ on \w+)", line)
    if m:
        at = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
        pending = (run_at(at.timestamp()), m.group(2))
    elif pending and "STATEMENT:" in line:
        waits[pending + (" ".join(line.split("STATEMENT:", 1)[1].split())[:80],)] += 1
        pending = None
for (run, lock, statement), n in sorted(waits.items()):
    print(f"  {run:<12} {n:>4} x waiting for {lock}: {statement}")
PY
fi
machine_line
[ -z "${KEEP_LOG:-}" ] || cp "$WORK/sandbox.log" "$KEEP_LOG"
