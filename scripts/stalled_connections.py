#!/usr/bin/env python3
"""Stalled connections against a sandbox started with a small open-file limit (loopback only, bounded in time).

What an attacker without a credential does: open CONNECTIONS connections that each send half a request line and
wait. Measured: how long a normal request (a new connection, GET /bridge/configs) takes meanwhile, and how many
of the stalled connections the sandbox still holds open at each of the CHECKS seconds after they were opened.

  scripts/stalled_connections.py --binary target/debug/bridge-sandbox
  scripts/stalled_connections.py --binary OLD --connections 1100 --checks 5,15,37

The sandbox runs as a child with RLIMIT_NOFILE set to --nofile (soft and hard, so it cannot raise it) and only
the default flags, so two builds are compared as they ship. This script raises its own soft limit to its hard
limit to hold the connections. The child is stopped (SIGTERM, then SIGKILL) at the end.
"""

import argparse
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def normal_request(port, timeout):
    """Seconds until a complete answer to a normal request, or None when none came within `timeout`."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(max(0.1, timeout - (time.monotonic() - started)))
            s.sendall(b"GET /bridge/configs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
        if answer.startswith(b"HTTP/1.1 200"):
            return time.monotonic() - started
        return None
    except OSError:
        return None


def still_open(sock):
    """Whether the server has not closed this connection (no FIN, no reset)."""
    try:
        data = sock.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK)
        return len(data) > 0  # an answer (e.g. 408) then a close would still count as open until the close
    except BlockingIOError:
        return True
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the bridge-sandbox binary to start")
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--nofile", type=int, default=1024, help="the child's RLIMIT_NOFILE (soft = hard)")
    parser.add_argument("--checks", default="1,5,15,37", help="seconds after opening at which to count")
    parser.add_argument("--request-timeout", type=float, default=10.0)
    parser.add_argument("--extra", default="", help="extra flags for `serve`, space separated")
    args = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.connections + 256
    if hard != resource.RLIM_INFINITY and hard < want:
        sys.exit(f"this shell's hard open-file limit {hard} is below {want}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else hard, hard))

    data = tempfile.mkdtemp(prefix="stalled-")
    port = free_port()
    nofile = args.nofile

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    cmd = [args.binary, "serve", "--listen", f"127.0.0.1:{port}", "--data", data] + args.extra.split()
    child = subprocess.Popen(cmd, preexec_fn=limit, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "RUST_LOG": "warn"})
    stalled = []
    try:
        deadline = time.monotonic() + 60
        while normal_request(port, 2) is None:
            if child.poll() is not None or time.monotonic() > deadline:
                sys.exit("the sandbox did not start")
            time.sleep(0.2)
        print(f"binary {args.binary}, RLIMIT_NOFILE {nofile}, {args.connections} stalled connections")
        print(f"normal request before: {normal_request(port, args.request_timeout):.3f} s")

        # All connects at once (non-blocking): those the server neither accepts nor queues do not hold the rest up.
        opened_at = time.monotonic()
        pending = {}
        selector = selectors.DefaultSelector()
        for _ in range(args.connections):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            pending[s.fileno()] = s
            selector.register(s, selectors.EVENT_WRITE)
        refused = 0
        while pending and time.monotonic() < opened_at + 10:
            for key, _ in selector.select(timeout=0.5):
                s = pending.pop(key.fd)
                selector.unregister(s)
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    try:
                        s.send(b"GET /bridge/con")  # half a request line, then nothing
                        stalled.append(s)
                        continue
                    except OSError:
                        pass
                refused += 1
                s.close()
        for s in pending.values():
            refused += 1
            s.close()
        print(f"opened {len(stalled)} in {time.monotonic() - opened_at:.1f} s ({refused} not opened)")

        took = normal_request(port, args.request_timeout)
        print("normal request during: " + (f"{took:.3f} s" if took is not None else
                                          f"no answer within {args.request_timeout:.0f} s"))
        for at in [float(x) for x in args.checks.split(",")]:
            wait = opened_at + at - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            open_now = sum(1 for s in stalled if still_open(s))
            took = normal_request(port, args.request_timeout)
            print(f"after {at:>4.0f} s: {open_now} of {len(stalled)} stalled connections still open; normal request "
                  + (f"{took:.3f} s" if took is not None else f"no answer within {args.request_timeout:.0f} s"))
    finally:
        for s in stalled:
            s.close()
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
