#!/usr/bin/env python3
"""Crash test of the sandbox: concurrent clients commit quotes and write events, the sandbox is killed with
SIGKILL mid-way, restarted on the same data directory, and everything acknowledged must be there.

Run through scripts/crash-test.sh (which builds the binary). Standard library only. Loopback only; every loop is
bounded (ROUNDS rounds of at most LOAD_SECONDS of load each).

Per round:
  1. start `bridge-sandbox serve --clock manual` on DATA (the same directory every round);
  2. CLIENTS threads loop: POST /bridge/quote/user then POST /bridge/quote/commit/{id} (an acknowledged commit is a
     200 answer), and POST /sandbox/webhook-test with a unique message (an acknowledged event is a 200 with its
     eventId); a slice of the clients commits under a second project, so isolation is checked too;
  3. after a random 1.5–LOAD_SECONDS s, SIGKILL (no shutdown, no flush), while requests are in flight;
  4. restart on DATA and check:
     * every acknowledged commit: GET /bridge/history/bridge/{id} answers 200 with that id, and its BRIDGE_PENDING
       event is in the feed;
     * every acknowledged webhook-test event is in the feed, with its message;
     * the feed, followed by its cursor from sinceTimestamp=0 with pageSize 50 and again with pageSize 7, gives the
       same sequence, with no duplicate event (BRIDGE_PENDING per bridge, WEBHOOK_TEST per message) and as many
       events as the database holds for the project;
     * in the database (read after the check, sandbox stopped): event sequence numbers are 1..N with no gap, every
       committed quote has its bridge, and every bridge its BRIDGE_PENDING event (nothing half-written);
     * the other project's events never appear in this project's feed.
"""
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

SANDBOX = os.environ["SANDBOX"]
DATA = os.environ["DATA"]
PORT = int(os.environ.get("PORT", "18580"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CLIENTS = int(os.environ.get("CLIENTS", "8"))
LOAD_SECONDS = float(os.environ.get("LOAD_SECONDS", "4"))
BASE = f"http://127.0.0.1:{PORT}"
PROJECT, OTHER = "crash-a", "crash-b"
QUOTE = {
    "token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "100", "mode": "pay",
    "depositor": "0x1111111111111111111111111111111111111111", "recipient": "0x2222222222222222222222222222222222222222",
}
# Nothing listens there: deliveries fail and are retried, so the outbox is busy too. Loopback.
HOOK = "http://127.0.0.1:9/never"


def token(project):
    return subprocess.check_output([SANDBOX, "token", "--project", project, "--data", DATA], text=True).strip()


def call(method, path, tok, body=None, timeout=10):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {tok}")
    if data is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def start():
    log = open(os.path.join(DATA, "..", "sandbox.log"), "ab")
    env = dict(os.environ, RUST_LOG="warn")
    proc = subprocess.Popen([SANDBOX, "serve", "--listen", f"127.0.0.1:{PORT}", "--data", DATA, "--clock", "manual"],
                            stdout=log, stderr=log, env=env)
    for _ in range(200):
        try:
            urllib.request.urlopen(BASE + "/webhook/public-key", timeout=1).read()
            return proc
        except Exception:
            if proc.poll() is not None:
                sys.exit(f"the sandbox exited with {proc.returncode} (see sandbox.log)")
            time.sleep(0.05)
    proc.kill()
    sys.exit("the sandbox did not come up")


class Acks:
    def __init__(self):
        self.lock = threading.Lock()
        self.commits = {PROJECT: set(), OTHER: set()}
        self.tests = {}  # message -> eventId
        self.attempts = 0
        self.failures = 0  # requests cut by the kill (not acknowledged)


def client(n, round_no, toks, acks, stop):
    project = OTHER if n % 4 == 3 else PROJECT
    tok = toks[project]
    i = 0
    while not stop.is_set() and i < 100_000:
        i += 1
        try:
            if project == PROJECT and i % 3 == 0:
                message = f"r{round_no}-c{n}-{i}"
                with acks.lock:
                    acks.attempts += 1
                status, body = call("POST", "/sandbox/webhook-test", tok, {"webhookUrl": HOOK, "message": message})
                if status == 200:
                    with acks.lock:
                        acks.tests[message] = body["eventId"]
                continue
            with acks.lock:
                acks.attempts += 1
            status, body = call("POST", "/bridge/quote/user", tok, QUOTE)
            if status != 200:
                raise RuntimeError(f"quote answered {status}: {body}")
            qid = body["quoteId"]
            status, body = call("POST", f"/bridge/quote/commit/{qid}", tok)
            if status == 200:
                with acks.lock:
                    acks.commits[project].add(qid)
            else:
                raise RuntimeError(f"commit answered {status}: {body}")
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            with acks.lock:
                acks.failures += 1
            if stop.is_set():
                return
            time.sleep(0.01)


def feed(tok, page_size):
    items, after, pages = [], None, 0
    while pages < 100_000:
        pages += 1
        q = f"/webhook/user-events-cursor?sinceTimestamp=0&pageSize={page_size}" + (f"&pageToken={after}" if after else "")
        status, body = call("GET", q, tok)
        assert status == 200, (status, body)
        items.extend(body["items"])
        after = body["nextPageToken"]
        if after is None:
            return items
    raise AssertionError("the feed did not end")


def identity(e):
    if e["_tag"] == "WEBHOOK_TEST":
        return ("WEBHOOK_TEST", e["message"])
    return (e["_tag"], e.get("_id"))


def check(round_no, acks, toks):
    problems = []
    for project in (PROJECT, OTHER):
        for qid in sorted(acks.commits[project]):
            status, body = call("GET", f"/bridge/history/bridge/{qid}", toks[project])
            if status != 200 or body.get("_id") != qid:
                problems.append(f"acknowledged commit {qid} ({project}) is not there: {status} {body}")
    events = feed(toks[PROJECT], 50)
    small = feed(toks[PROJECT], 7)
    if [identity(e) for e in events] != [identity(e) for e in small]:
        problems.append("the feed differs between pageSize 50 and pageSize 7")
    ids = [identity(e) for e in events]
    dups = len(ids) - len(set(ids))
    if dups:
        problems.append(f"{dups} duplicate events in the feed")
    have = set(ids)
    missing_pending = [q for q in acks.commits[PROJECT] if ("BRIDGE_PENDING", q) not in have]
    if missing_pending:
        problems.append(f"{len(missing_pending)} acknowledged commits have no BRIDGE_PENDING event: {missing_pending[:5]}")
    missing_tests = [m for m in acks.tests if ("WEBHOOK_TEST", m) not in have]
    if missing_tests:
        problems.append(f"{len(missing_tests)} acknowledged webhook-test events are missing: {missing_tests[:5]}")
    foreign = [q for q in acks.commits[OTHER] if ("BRIDGE_PENDING", q) in have]
    if foreign:
        problems.append(f"{len(foreign)} events of {OTHER} appear in {PROJECT}'s feed")
    other_events = feed(toks[OTHER], 50)
    return problems, len(events), len(other_events)


def check_database(feed_counts):
    problems = []
    db = sqlite3.connect(f"file:{os.path.join(DATA, 'sandbox.db')}?mode=ro", uri=True)
    seqs = [r[0] for r in db.execute("SELECT seq FROM events ORDER BY seq")]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"event sequence numbers have gaps: {len(seqs)} events, max {seqs[-1] if seqs else None}")
    for project, n in feed_counts.items():
        stored = db.execute("SELECT count(*) FROM events WHERE project = ?", (project,)).fetchone()[0]
        if stored != n:
            problems.append(f"{project}: the feed gave {n} events, the database holds {stored}")
    orphans = db.execute("SELECT count(*) FROM quotes q WHERE committed = 1 AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.id = q.id)").fetchone()[0]
    if orphans:
        problems.append(f"{orphans} committed quotes without a bridge")
    without_event = db.execute(
        "SELECT count(*) FROM bridges b WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.project = b.project "
        "AND json_extract(e.body, '$._tag') = 'BRIDGE_PENDING' AND json_extract(e.body, '$._id') = b.id)").fetchone()[0]
    if without_event:
        problems.append(f"{without_event} bridges without their BRIDGE_PENDING event")
    committed = db.execute("SELECT count(*) FROM quotes WHERE committed = 1").fetchone()[0]
    db.close()
    return problems, len(seqs), committed


def main():
    os.makedirs(DATA, exist_ok=True)
    rng = random.Random(int(os.environ.get("SEED", "1")))
    acks = Acks()
    toks = None
    all_problems = []
    for round_no in range(1, ROUNDS + 1):
        proc = start()
        if toks is None:
            toks = {PROJECT: token(PROJECT), OTHER: token(OTHER)}
        stop = threading.Event()
        threads = [threading.Thread(target=client, args=(n, round_no, toks, acks, stop), daemon=True) for n in range(CLIENTS)]
        before = (sum(len(c) for c in acks.commits.values()), len(acks.tests))
        for t in threads:
            t.start()
        delay = rng.uniform(1.5, max(1.6, LOAD_SECONDS))
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)  # mid-way: the clients are still sending
        proc.wait()
        stop.set()
        for t in threads:
            t.join(timeout=15)
        after = (sum(len(c) for c in acks.commits.values()), len(acks.tests))
        proc = start()
        problems, n_events, n_other = check(round_no, acks, toks)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        db_problems, stored, committed = check_database({PROJECT: n_events, OTHER: n_other})
        problems += db_problems
        print(f"round {round_no}: killed after {delay:.2f} s; acknowledged this round: {after[0] - before[0]} commits, "
              f"{after[1] - before[1]} webhook-test events; in total {after[0]} commits, {after[1]} test events acknowledged; "
              f"{committed} quotes committed in the database (acknowledged or cut by the kill), {stored} events stored, "
              f"feed of {PROJECT}: {n_events} events; requests cut by the kill: {acks.failures} so far; "
              f"{'OK' if not problems else 'PROBLEMS'}", flush=True)
        for p in problems:
            print("  - " + p, flush=True)
        all_problems += problems
    if all_problems:
        print(f"{len(all_problems)} problems")
        sys.exit(1)
    print(f"crash test passed: {ROUNDS} SIGKILLs, {sum(len(c) for c in acks.commits.values())} acknowledged commits and "
          f"{len(acks.tests)} acknowledged events all present, feed without gap or duplicate")


if __name__ == "__main__":
    main()
