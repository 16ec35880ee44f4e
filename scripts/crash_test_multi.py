#!/usr/bin/env python3
"""Crash test of several sandbox instances on one PostgreSQL database: writers spread over three instances, one
instance SIGKILLed and restarted under load; everything acknowledged must be there, once, and delivered.

Run through scripts/crash-test-multi.sh (which builds the binary). Standard library only, plus PostgreSQL's own
binaries (initdb, pg_ctl, createdb, psql), found like the Rust tests find them. Loopback only; bounded.

  1. a throw-away PostgreSQL server (initdb into WORK, a free port of 127.0.0.1), one database;
  2. three `bridge-sandbox serve --database-url ... --clock manual` instances; a webhook receiver on 127.0.0.1
     that answers 200 and records every eventId it is sent;
  3. CLIENTS threads, client n on instance n % 3, loop: quote + commit with the receiver as `webhookUrl` (an
     acknowledged commit is a 200), and POST /sandbox/webhook-test to the receiver (an acknowledged event is a
     200 with its eventId);
  4. per round: after a random 1.5–LOAD_SECONDS s, SIGKILL one instance (round robin) while requests are in
     flight, restart it at once on the same database, keep the load on for 1 s more, then stop the clients;
  4b. FOLLOW=1 (the default): a follower reads the growing feed all the while, round robin over the instances
     (the killed one too: a cut request is retried on the next instance), FOLLOW_PAGE events a page. The last
     page has no nextPageToken, so it is read again from its own start and its first events skipped; each such
     re-read must begin with exactly the events read before (else a position became visible behind the reader,
     or an event's text changed between reads: both are reported at once, with the page);
  5. check, through an instance that was not killed and in the database (psql):
     * every acknowledged commit has its bridge and exactly one BRIDGE_PENDING event;
     * every acknowledged webhook-test event is in the feed;
     * the feed, traversed with pageSize 50 and 7, is the same sequence, without duplicate, and as long as the
       project's events in the database; feed positions in the database are 1..N with no gap;
     * every event of the feed (all have a webhookUrl) reaches the receiver, within DELIVERY_WAIT seconds (a
       delivery in flight at the killed instance is retried when its 60 s lease runs out);
     * the follower, caught up, read exactly the events of a fresh traversal, in the same order (compared event
       by event; a missing event is reported with its neighbours).

The CI form is short (ROUNDS=1); the stress form repeats the kill often enough to catch a rare case, without
waiting for the deliveries each round (DELIVERY_WAIT=0 skips that check), e.g.
  ROUNDS=30 CLIENTS=12 LOAD_SECONDS=3 FOLLOW_PAGE=3 DELIVERY_WAIT=0 scripts/crash-test-multi.sh

RETAIN=2s runs every instance with `--retain 2s`: the purge deletes, during the run and under the kills, events
(once delivered), quotes and ended bridges older than 2 s. Under RETAIN every other acknowledged commit is
cancelled at once (PATCH .../bridge/{id} to a third instance): CANCELLED has ended, so those bridges are purged
too; the others stay PENDING (the manual clock never moves them), under way, never to be purged. The test then
expects only what the retention promises to keep, and proves the rest was purged, not lost: triggers it installs
in the database copy every deleted event, delivery and bridge, with the time of its deletion, into tables of its
own (`purged_*`), and the checks become:
  * every acknowledged commit has its bridge, or its bridge was purged, ended (CANCELLED) and older than the
    retention; every acknowledged cancellation's bridge is CANCELLED or purged; no bridge under way was purged;
    exactly one BRIDGE_PENDING among the events kept and purged;
  * every acknowledged event is in the feed or was purged;
  * feed positions of the events kept and purged together are 1..N with no gap (nothing was lost, nothing taken
    twice);
  * nothing was purged younger than the retention (its `stored_ms` against the database's clock at its deletion)
    and no delivery was purged pending; every event, kept or purged, reached the receiver;
  * the two traversals and the follower agree up to events purged between their reads (each read in order; an
    event one has and the other lacks was purged).
"""
import glob
import http.server
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

SANDBOX = os.environ["SANDBOX"]
WORK = os.environ["WORK"]
ROUNDS = int(os.environ.get("ROUNDS", "2"))
CLIENTS = int(os.environ.get("CLIENTS", "6"))
LOAD_SECONDS = float(os.environ.get("LOAD_SECONDS", "4"))
DELIVERY_WAIT = float(os.environ.get("DELIVERY_WAIT", "90"))
FOLLOW = os.environ.get("FOLLOW", "1") == "1"
FOLLOW_PAGE = int(os.environ.get("FOLLOW_PAGE", "7"))
RETAIN = os.environ.get("RETAIN") or None
INSTANCES = 3
PROJECT = "crash-a"
QUOTE = {
    "token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "100", "mode": "pay",
    "depositor": "0x1111111111111111111111111111111111111111", "recipient": "0x2222222222222222222222222222222222222222",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin():
    initdb = shutil.which("initdb")
    if initdb:
        return os.path.dirname(os.path.realpath(initdb))
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        sys.exit("PostgreSQL is not installed (apt-get install postgresql)")
    return os.path.dirname(found[-1])


class Postgres:
    def __init__(self):
        self.bin = pg_bin()
        self.dir = os.path.join(WORK, "pg")
        os.makedirs(self.dir)
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user:
            subprocess.check_call(["chown", "-R", self.user, WORK])
        self.port = free_port()
        self.run("initdb", "-D", f"{self.dir}/data", "-U", "sandbox", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-o", f"-p {self.port} -h 127.0.0.1 -k {self.dir}",
                 "-l", f"{self.dir}/server.log", "-w", "start")
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "sandbox", "crash")
        self.url = f"postgres://sandbox@127.0.0.1:{self.port}/crash"

    def run(self, program, *args, capture=False):
        cmd = [os.path.join(self.bin, program), *args]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        if capture:
            return subprocess.check_output(cmd, text=True)
        subprocess.check_call(cmd, stdout=subprocess.DEVNULL)

    def sql(self, query):
        out = self.run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "sandbox", "-d", "crash", "-At",
                       "-c", query, capture=True)
        return [line.split("|") for line in out.splitlines() if line]

    def stop(self):
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop")


# What the purge deletes, copied by triggers with the database's time of the deletion (RETAIN=...).
PURGE_AUDIT = """
CREATE TABLE purged_events (seq BIGINT, id TEXT, body TEXT, webhook_url TEXT, stored_ms BIGINT, purged_ms BIGINT);
CREATE TABLE purged_deliveries (event_id TEXT, delivered BOOLEAN, next_ms BIGINT, purged_ms BIGINT);
CREATE TABLE purged_bridges (id TEXT, state TEXT, ended BOOLEAN, stored_ms BIGINT, purged_ms BIGINT);
CREATE FUNCTION wall_ms() RETURNS BIGINT LANGUAGE sql AS
  'SELECT CAST(round(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)';
CREATE FUNCTION keep_purged_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO purged_events VALUES (OLD.seq, OLD.id, OLD.body, OLD.webhook_url, OLD.stored_ms, wall_ms());
  RETURN OLD; END $$;
CREATE FUNCTION keep_purged_delivery() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO purged_deliveries VALUES (OLD.event_id, OLD.delivered, OLD.next_ms, wall_ms());
  RETURN OLD; END $$;
CREATE FUNCTION keep_purged_bridge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO purged_bridges VALUES (OLD.id, OLD.state, OLD.ended, OLD.stored_ms, wall_ms());
  RETURN OLD; END $$;
CREATE TRIGGER keep_purged_event BEFORE DELETE ON events FOR EACH ROW EXECUTE FUNCTION keep_purged_event();
CREATE TRIGGER keep_purged_delivery BEFORE DELETE ON outbox FOR EACH ROW EXECUTE FUNCTION keep_purged_delivery();
CREATE TRIGGER keep_purged_bridge BEFORE DELETE ON bridges FOR EACH ROW EXECUTE FUNCTION keep_purged_bridge();
"""


def retain_ms():
    number, unit = RETAIN[:-1], RETAIN[-1]
    return int(float(number) * {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}[unit])


def purged_events(pg):
    """The events the purge deleted: canonical JSON text -> (seq, id, webhook_url)."""
    rows = pg.sql("SELECT seq, id, coalesce(webhook_url, ''), body FROM purged_events")
    return {json.dumps(json.loads("|".join(r[3:])), sort_keys=True): (int(r[0]), r[1], r[2]) for r in rows}


def in_order_but_purged(first, second, purged, what):
    """`first` and `second` (canonical events, each read in feed order, `second` later) agree up to purged
    events: each event one has and the other lacks was purged, and the rest is in the same order."""
    problems = []
    common = set(first) & set(second)
    for name, events in ((f"{what}: first", first), (f"{what}: second", second)):
        lacking = [e for e in events if e not in common and e not in purged]
        if lacking:
            problems.append(f"{name} read {len(lacking)} events the other lacks that were not purged: {lacking[:3]}")
        if len(set(events)) != len(events):
            problems.append(f"{name} read an event twice")
    if [e for e in first if e in common] != [e for e in second if e in common]:
        problems.append(f"{what}: the events both read are not in the same order")
    return problems


class Receiver(http.server.BaseHTTPRequestHandler):
    seen = {}
    lock = threading.Lock()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with Receiver.lock:
            Receiver.seen[body["eventId"]] = Receiver.seen.get(body["eventId"], 0) + 1
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def call(base, method, path, tok, body=None, timeout=10):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {tok}")
    if data is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


class Instance:
    def __init__(self, n, url):
        self.n, self.url, self.port, self.proc = n, url, free_port(), None
        self.base = f"http://127.0.0.1:{self.port}"

    def start(self):
        log = open(os.path.join(WORK, f"sandbox-{self.n}.log"), "ab")
        env = dict(os.environ, RUST_LOG="warn")
        retain = ["--retain", RETAIN] if RETAIN else []
        self.proc = subprocess.Popen([SANDBOX, "serve", "--listen", f"127.0.0.1:{self.port}", "--database-url",
                                      self.url, "--clock", "manual", *retain], stdout=log, stderr=log, env=env)
        for _ in range(400):
            try:
                urllib.request.urlopen(self.base + "/webhook/public-key", timeout=1).read()
                return
            except Exception:
                if self.proc.poll() is not None:
                    sys.exit(f"instance {self.n} exited with {self.proc.returncode} (see {WORK}/sandbox-{self.n}.log)")
                time.sleep(0.05)
        sys.exit(f"instance {self.n} did not come up")


class Acks:
    def __init__(self):
        self.lock = threading.Lock()
        self.commits, self.tests, self.failures = set(), {}, 0
        self.cancels = set()  # under RETAIN: commits whose cancellation was acknowledged


def client(n, round_no, instances, tok, hook, acks, stop):
    i = 0
    while not stop.is_set() and i < 100_000:
        i += 1
        base = instances[n % INSTANCES].base
        try:
            if i % 3 == 0:
                message = f"r{round_no}-c{n}-{i}"
                status, body = call(base, "POST", "/sandbox/webhook-test", tok, {"webhookUrl": hook, "message": message})
                if status == 200:
                    with acks.lock:
                        acks.tests[message] = body["eventId"]
                continue
            status, body = call(base, "POST", "/bridge/quote/user", tok, dict(QUOTE, webhookUrl=hook))
            if status != 200:
                raise RuntimeError(f"quote answered {status}: {body}")
            qid = body["quoteId"]
            # The commit goes to another instance: requests may go to any instance in any order.
            status, body = call(instances[(n + 1) % INSTANCES].base, "POST", f"/bridge/quote/commit/{qid}", tok)
            if status == 200:
                with acks.lock:
                    acks.commits.add(qid)
            elif status not in (404, 503):
                raise RuntimeError(f"commit answered {status}: {body}")
            if RETAIN and status == 200 and i % 2 == 0:
                # Ended, so purged once older than the retention (bridge ids are quote ids).
                status, body = call(instances[(n + 2) % INSTANCES].base, "PATCH", f"/bridge/history/bridge/{qid}", tok,
                                    {"state": "CANCELLED"})
                if status == 200:
                    with acks.lock:
                        acks.cancels.add(qid)
                elif status != 503:
                    raise RuntimeError(f"cancel answered {status}: {body}")
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            with acks.lock:
                acks.failures += 1
            time.sleep(0.01)


def feed(base, tok, page_size):
    items, after = [], None
    for _ in range(100_000):
        q = f"/webhook/user-events-cursor?sinceTimestamp=0&pageSize={page_size}" + (f"&pageToken={after}" if after else "")
        status, body = call(base, "GET", q, tok)
        assert status == 200, (status, body)
        items.extend(body["items"])
        after = body["nextPageToken"]
        if after is None:
            return items
    raise AssertionError("the feed did not end")


def canonical(event):
    return json.dumps(event, sort_keys=True)


class Follower:
    """Follows the growing feed round robin over the instances, as a consumer would: the cursor of the page being
    read and how many of its events were consumed; a re-read of that page must start with the same events."""

    def __init__(self, instances, tok):
        self.instances, self.tok = instances, tok
        self.events, self.problems, self.vanished = [], [], []
        self.token, self.page = None, []  # cursor of the page being read, its events consumed so far
        self.reads, self.cut = 0, 0
        self.n = 0

    def read_once(self):
        """One page from the next instance; True when the feed's end was reached (no nextPageToken)."""
        base = self.instances[self.n % len(self.instances)].base
        self.n += 1
        q = f"/webhook/user-events-cursor?sinceTimestamp=0&pageSize={FOLLOW_PAGE}"
        if self.token:
            q += f"&pageToken={self.token}"
        try:
            status, body = call(base, "GET", q, self.tok, timeout=5)
        except Exception:  # a request cut by the kill (reset, refused, truncated): the next instance is asked
            self.cut += 1
            return False
        if status != 200:
            self.cut += 1
            return False
        self.reads += 1
        items = [canonical(e) for e in body["items"]]
        if RETAIN and items[:len(self.page)] != self.page:
            # Events of the page read before may have been purged since (older than the retention): what is left
            # of the page must still begin the re-read; the vanished ones are checked against the purged later.
            kept = set(items)
            self.vanished += [e for e in self.page if e not in kept]
            self.page = [e for e in self.page if e in kept]
        if items[:len(self.page)] != self.page:
            self.problems.append(
                f"follower: page after token {self.token} re-read from instance {base} does not start with the "
                f"{len(self.page)} events read before: before {self.page}, now {items}")
            # Keep following from what the page says now, so that later checks still compare.
            self.page = items[:len(self.page)]
        self.events.extend(items[len(self.page):])
        if body["nextPageToken"] is None:
            self.page = items
            return True
        self.token, self.page = body["nextPageToken"], []
        return False

    def run(self, stop):
        while not stop.is_set():
            if self.read_once():
                time.sleep(0.005)

    def catch_up(self):
        for _ in range(100_000):
            if self.read_once():
                return
        self.problems.append("follower: the feed did not end")


def compare_follower(follower, fresh, purged=None):
    fresh = [canonical(e) for e in fresh]
    if RETAIN:
        problems = in_order_but_purged(follower.events, fresh, purged, "follower and a fresh traversal")
        problems += [f"follower: an event vanished from a re-read page and was not purged: {e}"
                     for e in follower.vanished if e not in purged][:3]
        follower.vanished = []
        return problems
    if follower.events == fresh:
        return []
    problems = []
    have = set(follower.events)
    missing = [(i, e) for i, e in enumerate(fresh) if e not in have]
    for i, e in missing[:5]:
        around = fresh[max(0, i - 2):i + 3]
        problems.append(f"follower missed fresh event #{i} {e}; fresh around it: {around}")
    extra = set(follower.events) - set(fresh)
    if extra:
        problems.append(f"follower read {len(extra)} events a fresh traversal does not have: {sorted(extra)[:3]}")
    if not missing and not extra:
        problems.append("follower read the same events in another order (or twice)")
    return problems


def acknowledged_events_problems(events, acks, where):
    """What `events` (the feed, or the feed with what was purged: `where` says which) lacks of what was
    acknowledged: each acknowledged commit has exactly one BRIDGE_PENDING, each acknowledged test event is there."""
    problems, pending, tests = [], {}, set()
    for e in events:
        if e["_tag"] == "BRIDGE_PENDING":
            pending[e["_id"]] = pending.get(e["_id"], 0) + 1
        elif e["_tag"] == "WEBHOOK_TEST":
            tests.add(e["message"])
    twice = [q for q, n in pending.items() if n != 1]
    if twice:
        problems.append(f"{len(twice)} bridges with more than one BRIDGE_PENDING: {twice[:5]}")
    missing = [q for q in acks.commits if q not in pending]
    if missing:
        problems.append(f"{len(missing)} acknowledged commits without BRIDGE_PENDING{where}: {missing[:5]}")
    missing_tests = [m for m in acks.tests if m not in tests]
    if missing_tests:
        problems.append(f"{len(missing_tests)} acknowledged webhook-test events missing{where}: {missing_tests[:5]}")
    return problems


def check(pg, base, tok, acks):
    if RETAIN:
        return check_retained(pg, base, tok, acks)
    problems = []
    for qid in sorted(acks.commits):
        status, body = call(base, "GET", f"/bridge/history/bridge/{qid}", tok)
        if status != 200 or body.get("_id") != qid:
            problems.append(f"acknowledged commit {qid} is not there: {status} {body}")
    events, small = feed(base, tok, 50), feed(base, tok, 7)
    key = lambda e: e["eventId"] if "eventId" in e else json.dumps(e, sort_keys=True)
    if [json.dumps(e, sort_keys=True) for e in events] != [json.dumps(e, sort_keys=True) for e in small]:
        problems.append("the feed differs between pageSize 50 and pageSize 7")
    problems += acknowledged_events_problems(events, acks, "")
    seqs = [int(r[0]) for r in pg.sql("SELECT seq FROM events ORDER BY seq")]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"feed positions have gaps: {len(seqs)} events, max {seqs[-1] if seqs else None}")
    if len(seqs) != len(events):
        problems.append(f"the feed gave {len(events)} events, the database holds {len(seqs)}")
    orphans = pg.sql("SELECT count(*) FROM quotes q WHERE committed AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.id = q.id)")
    if orphans[0][0] != "0":
        problems.append(f"{orphans[0][0]} committed quotes without a bridge")
    wrong = pg.sql("SELECT count(*) FROM bridges b WHERE (SELECT count(*) FROM events e WHERE e.project = b.project AND "
                   "e.body::jsonb->>'_tag' = 'BRIDGE_PENDING' AND e.body::jsonb->>'_id' = b.id) <> 1")
    if wrong[0][0] != "0":
        problems.append(f"{wrong[0][0]} bridges without exactly one BRIDGE_PENDING event in the database")
    if DELIVERY_WAIT <= 0:  # the stress form of the follower: deliveries are not what it repeats
        return problems, events, 0.0
    ids = [r[0] for r in pg.sql("SELECT id FROM events WHERE webhook_url IS NOT NULL")]
    deadline = time.time() + DELIVERY_WAIT
    while time.time() < deadline:
        with Receiver.lock:
            undelivered = [i for i in ids if i not in Receiver.seen]
        if not undelivered:
            break
        time.sleep(0.5)
    waited = DELIVERY_WAIT - max(0.0, deadline - time.time())
    if undelivered:
        problems.append(f"{len(undelivered)} events with a webhookUrl never delivered: {undelivered[:5]}")
    return problems, events, waited


def check_retained(pg, base, tok, acks):
    """`check` under RETAIN: what the retention promises to keep is there; what is missing was purged, old."""
    problems = []
    keep = retain_ms()
    answers = {qid: call(base, "GET", f"/bridge/history/bridge/{qid}", tok) for qid in sorted(acks.commits)}
    # Read after the bridges: one purged before its read is here.
    purged_bridges = {r[0]: r[1:] for r in pg.sql(
        f"SELECT id, state, ended, stored_ms < purged_ms - {keep} FROM purged_bridges")}
    for qid, (status, body) in answers.items():
        if status == 200 and body.get("_id") == qid:
            if qid in acks.cancels and body.get("state") != "CANCELLED":
                problems.append(f"acknowledged cancellation of {qid} is not there: {body.get('state')}")
        elif (status, body.get("_tag"), body.get("message")) != (422, "InvalidRequest", f"no bridge {qid}") \
                or qid not in purged_bridges:  # an unknown bridge answers 422, as production does
            problems.append(f"acknowledged commit {qid} is not there, nor purged: {status} {body}")
    wrong = [(i, r) for i, r in purged_bridges.items() if r != ["CANCELLED", "t", "t"]]
    if wrong:
        problems.append(f"{len(wrong)} bridges purged that were not CANCELLED (ended) and older than the retention "
                        f"(id, state, ended, older): {wrong[:5]}")
    events, small = feed(base, tok, 50), feed(base, tok, 7)
    purged = purged_events(pg)
    events, small = [canonical(e) for e in events], [canonical(e) for e in small]
    problems += in_order_but_purged(events, small, purged, "the feed with pageSize 50 and 7")
    kept_and_purged = [json.loads(e) for e in set(events) | set(small) | set(purged)]
    problems += acknowledged_events_problems(kept_and_purged, acks, ", kept or purged")
    # Kept and purged in one statement (one snapshot): an event purged between two reads would be in neither.
    seqs = sorted(int(r[0]) for r in pg.sql("SELECT seq FROM events UNION ALL SELECT seq FROM purged_events"))
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"feed positions of the events kept and purged have gaps or repeats: {len(seqs)} events, "
                        f"max {seqs[-1] if seqs else None}")
    young = pg.sql(f"SELECT count(*) FROM purged_events WHERE stored_ms >= purged_ms - {keep}")[0][0]
    pending_deliveries = pg.sql("SELECT count(*) FROM purged_deliveries WHERE next_ms IS NOT NULL")[0][0]
    if young != "0":
        problems.append(f"{young} events were purged younger than the retention ({RETAIN})")
    if pending_deliveries != "0":
        problems.append(f"{pending_deliveries} deliveries were purged while pending")
    orphans = pg.sql("SELECT count(*) FROM quotes q WHERE committed AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.id = q.id)")
    if orphans[0][0] != "0":
        problems.append(f"{orphans[0][0]} committed quotes without a bridge")
    if DELIVERY_WAIT <= 0:
        return problems, [json.loads(e) for e in events], 0.0
    ids = [r[0] for r in pg.sql("SELECT id FROM events WHERE webhook_url IS NOT NULL "
                                "UNION ALL SELECT id FROM purged_events WHERE webhook_url IS NOT NULL")]
    deadline = time.time() + DELIVERY_WAIT
    while time.time() < deadline:
        with Receiver.lock:
            undelivered = [i for i in ids if i not in Receiver.seen]
        if not undelivered:
            break
        time.sleep(0.5)
    waited = DELIVERY_WAIT - max(0.0, deadline - time.time())
    if undelivered:
        problems.append(f"{len(undelivered)} events with a webhookUrl never delivered: {undelivered[:5]}")
    return problems, [json.loads(e) for e in events], waited


def main():
    t0 = time.time()
    pg = Postgres()
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    instances = [Instance(n, pg.url) for n in range(INSTANCES)]
    problems = []
    try:
        for inst in instances:
            inst.start()
        if RETAIN:
            pg.sql(PURGE_AUDIT)
        tok = subprocess.check_output([SANDBOX, "token", "--project", PROJECT, "--database-url", pg.url], text=True).strip()
        rng = random.Random(int(os.environ.get("SEED", "1")))
        acks = Acks()
        follower = Follower(instances, tok) if FOLLOW else None
        for round_no in range(1, ROUNDS + 1):
            victim = instances[(round_no - 1) % INSTANCES]
            stop = threading.Event()
            threads = [threading.Thread(target=client, args=(n, round_no, instances, tok, hook, acks, stop), daemon=True)
                       for n in range(CLIENTS)]
            for t in threads:
                t.start()
            if follower:
                threads.append(threading.Thread(target=follower.run, args=(stop,), daemon=True))
                threads[-1].start()
            delay = rng.uniform(1.5, max(1.6, LOAD_SECONDS))
            time.sleep(delay)
            victim.proc.send_signal(signal.SIGKILL)
            victim.proc.wait()
            victim.start()  # under load: the other clients never stopped
            time.sleep(1.0)
            stop.set()
            for t in threads:
                t.join(timeout=15)
            witness = instances[round_no % INSTANCES]
            round_problems, fresh, waited = check(pg, witness.base, tok, acks)
            n_events = len(fresh)
            if follower:
                follower.catch_up()
                round_problems += follower.problems + compare_follower(
                    follower, fresh, purged_events(pg) if RETAIN else None)
                follower.problems = []
            purged_so_far = pg.sql("SELECT (SELECT count(*) FROM purged_events) || ' events, ' || "
                                   "(SELECT count(*) FROM purged_bridges) || ' bridges'")[0][0] if RETAIN else None
            print(f"round {round_no}: instance {victim.n} killed after {delay:.2f} s and restarted under load; "
                  f"{len(acks.commits)} commits and {len(acks.tests)} test events acknowledged so far, "
                  f"feed {n_events} events, all delivered after {waited:.1f} s; requests cut: {acks.failures}; "
                  + (f"{len(acks.cancels)} cancelled; {purged_so_far} purged (--retain {RETAIN}); " if RETAIN else "")
                  + (f"follower {len(follower.events)} events in {follower.reads} pages ({follower.cut} cut); "
                     if follower else "") +
                  f"{'OK' if not round_problems else 'PROBLEMS'}", flush=True)
            for p in round_problems:
                print("  - " + p, flush=True)
            problems += round_problems
    finally:
        for inst in instances:
            if inst.proc and inst.proc.poll() is None:
                inst.proc.send_signal(signal.SIGTERM)
                inst.proc.wait(timeout=30)
        receiver.shutdown()
        pg.stop()
    if problems:
        print(f"{len(problems)} problems")
        sys.exit(1)
    print(f"multi-instance crash test passed in {time.time() - t0:.1f} s: {ROUNDS} SIGKILLs of one of {INSTANCES} "
          f"instances, every acknowledged commit with its bridge and one BRIDGE_PENDING, feed without gap or duplicate, "
          f"every event delivered"
          + (f"; with --retain {RETAIN}: what is missing was purged, older than the retention" if RETAIN else ""))


if __name__ == "__main__":
    main()
