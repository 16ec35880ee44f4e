#!/usr/bin/env python3
"""The Python client of scenario.py (openapi-python-client, generated from the served document) against a project
whose fault profile answers a share of its requests 429 TooManyRequests and 503 ServiceUnavailable on purpose
(`PUT /sandbox/faults`, or `serve --faults`).

The generated client does not retry: a 429 or a 503 is the caller's answer. What it needs is the few lines of
`Retrying` below, an httpx transport handed to the generated client (`httpx_args={"transport": ...}`) that sends
a request again after a 429 (waiting its `Retry-After`) or a 503 whose body is the contract's
`ServiceUnavailable` (nothing was changed, so even a commit may be sent again).

Runs the scenario (quote, commit, the history, three rounds) with the retrying transport, then once more without
it, which must stop at a fault. Prints a JSON report on stdout: {"generators", "calls", "faults": {kind: count},
"retries", "withoutRetries": {"status", "fault"}, "error"}. Run by crates/bridge-sandbox/tests/it/clients.rs; by
hand (after scripts/clients/install.sh, with a sandbox running, e.g.
`bridge-sandbox serve --seed 35 --faults 'requests.tooManyRequests=0.2:200ms,requests.unavailable=0.2'`, and a
token of `bridge-sandbox token --project p`):

    scripts/clients/python/.venv/bin/python scripts/clients/python/faults.py \\
        http://127.0.0.1:8080 "$TOKEN" "$(mktemp -d)"
"""

import collections
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario import EVM_A, EVM_B, generate  # noqa: E402


class Retrying(httpx.BaseTransport):
    """Sends a request again, up to `attempts` in all, after a 429 (waiting `Retry-After` seconds) or a 503 with
    the contract's `ServiceUnavailable` body: both say nothing was changed."""

    def __init__(self, attempts=6, seen=None):
        self.inner = httpx.HTTPTransport()
        self.attempts = attempts
        self.seen = seen if seen is not None else []

    def handle_request(self, request):
        for attempt in range(1, self.attempts + 1):
            response = self.inner.handle_request(request)
            self.seen.append(response.headers.get("x-sandbox-fault"))
            if attempt == self.attempts or response.status_code not in (429, 503):
                return response
            response.read()
            if response.status_code == 503 and response.json().get("_tag") != "ServiceUnavailable":
                return response  # a gateway's 503: the request may have been carried out
            time.sleep(float(response.headers.get("retry-after", "1")) if response.status_code == 429 else 0.2)
        return response


class Scenario:
    def __init__(self, base, token, work, report):
        sys.path.insert(0, str(work))
        self.api = importlib.import_module("bridge_api")
        self.models = importlib.import_module("bridge_api.models")
        self.base, self.token, self.report = base, token, report

    def op(self, module):
        area, name = module.split(".")
        return importlib.import_module(f"bridge_api.api.{area}.{name}")

    def client(self, transport=None):
        args = {"transport": transport} if transport else {}
        return self.api.AuthenticatedClient(base_url=self.base, token=self.token, timeout=30.0, httpx_args=args)

    def expect(self, name, operation, response):
        """A 200, or the error that stops the scenario (its status and fault header)."""
        self.report["calls"].append({"name": name, "operation": operation, "status": int(response.status_code)})
        if int(response.status_code) != 200:
            raise Refused(name, int(response.status_code), response.headers.get("x-sandbox-fault"))
        return response.parsed

    def run(self, client, before=0):
        """Three rounds; `before`: the bridges the project already has."""
        m = self.models
        for round in range(3):
            body = m.BridgeQuoteRequest.from_dict({
                "token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "100", "mode": "pay",
                "depositor": EVM_A, "recipient": EVM_B})
            quote = self.expect("quote", "quoteBridge",
                                self.op("quotes.quote_bridge").sync_detailed(client=client, body=body))
            self.expect("commit", "commitQuote",
                        self.op("quotes.commit_quote").sync_detailed(quote.quote_id, client=client))
            page = self.expect("history", "listBridgeHistory", self.op("history.list_bridge_history").sync_detailed(
                client=client, page=1, limit=10, sort_by=m.HistorySortBy("createdAt"),
                sort_direction=m.SortDirection("desc")))
            if len(page.items) != before + round + 1:
                raise AssertionError(f"round {round}: the history lists {len(page.items)} bridges")


class Refused(Exception):
    def __init__(self, name, status, fault):
        super().__init__(f"{name}: {status} (x-sandbox-fault: {fault})")
        self.status, self.fault = status, fault


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    base, token, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    report = {"generators": {}, "calls": [], "error": None}
    try:
        generate(base, work, report)
        scenario = Scenario(base, token, work, report)
        seen = []
        started = time.monotonic()
        scenario.run(scenario.client(Retrying(seen=seen)))
        report["seconds"] = round(time.monotonic() - started, 2)
        report["faults"] = dict(collections.Counter(f for f in seen if f))
        report["retries"] = len(seen) - len(report["calls"])
        try:
            scenario.run(scenario.client(), before=3)
            report["withoutRetries"] = None
        except Refused as e:
            report["withoutRetries"] = {"status": e.status, "fault": e.fault}
    except Exception:  # the report says what failed; the Rust test prints it
        report["error"] = traceback.format_exc()
    print(json.dumps(report))
    sys.exit(1 if report["error"] else 0)


if __name__ == "__main__":
    main()
