#!/usr/bin/env python3
"""A Python team's client of the service, made the way such a team makes it, driven against a running server.

1. Generates, from the document the server serves (`<base>/openapi.json`), a client with openapi-python-client
   and pydantic models with datamodel-code-generator (the versions pinned in requirements.txt); every line
   either prints besides its usual progress is a warning, and the report lists them.
2. Drives a scenario through the generated client: both kinds of quote, commit, the bridge, the history, a
   sandbox deposit moved to EXECUTED with the sandbox clock, the event feed, deposit addresses and their
   search, and a 400, a 401 and a 422. Each answer must have its expected status and parse into the expected
   generated model, exactly: every member of the JSON is a field of the model (no `additional_properties` left,
   at any depth) and the model writes back the same members. The same JSON must validate with the pydantic model
   of the same component.
3. With PRODUCTION_FIXTURES set to a directory of production payload fixtures (tests/fixtures/production), parses
   each with the pydantic model of the component it names.

Prints a JSON report on stdout: {"generators": {name: {"version", "warnings"}}, "calls": [{"name", "operation",
"status", "model", "pydantic"}], "productionPayloads": {"checked", "failures"}, "error"}. Run by
crates/bridge-sandbox/tests/it/clients.rs; by hand (after scripts/clients/install.sh, with a sandbox running and a
token of `bridge-sandbox token --project p`):

    scripts/clients/python/.venv/bin/python scripts/clients/python/scenario.py \\
        http://127.0.0.1:8080 "$TOKEN" "$(mktemp -d)"
"""

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
EVM_A = "0x1111111111111111111111111111111111111111"
EVM_B = "0x2222222222222222222222222222222222222222"

# datamodel-code-generator's options: pydantic v2 models; OpenAPI 3.0's `nullable` as written (--strict-nullable);
# single-value enums (the `_tag`s) as Literal; the document's own scalar formats kept as plain strings and
# numbers; its built-in formatter.
DATAMODEL_OPTIONS = [
    "--input-file-type", "openapi",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.11",
    "--strict-nullable",
    "--enum-field-as-literal", "one",
    "--type-mappings", "string+decimal-string=string", "number+decimal-number=number",
    "--formatters", "builtin",
]


def run(args):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)


def generate(base, work, report):
    url = f"{base}/openapi.json"
    out = run([str(BIN / "openapi-python-client"), "generate", "--url", url, "--meta", "none",
               "--output-path", str(work / "bridge_api"), "--fail-on-warning"])
    lines = [l for l in (out.stdout + out.stderr).splitlines() if l.strip() and not l.startswith("Generating ")]
    report["generators"]["openapi-python-client"] = {
        "version": importlib.metadata.version("openapi-python-client"), "warnings": lines, "status": out.returncode}
    if out.returncode != 0:
        raise RuntimeError(f"openapi-python-client failed: {out.stdout}{out.stderr}")

    # --allow-private-network: the server is on 127.0.0.1, which datamodel-codegen refuses to fetch from by default.
    out = run([str(BIN / "datamodel-codegen"), "--url", url, "--allow-private-network", *DATAMODEL_OPTIONS,
               "--output", str(work / "bridge_models.py")])
    lines = [l for l in (out.stdout + out.stderr).splitlines() if l.strip()]
    report["generators"]["datamodel-code-generator"] = {
        "version": importlib.metadata.version("datamodel-code-generator"), "warnings": lines, "status": out.returncode}
    if out.returncode != 0:
        raise RuntimeError(f"datamodel-code-generator failed: {out.stdout}{out.stderr}")


def shape(value):
    """The members and JSON kinds of a value, without the scalars' text (a date written back by Python differs)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    return "number" if isinstance(value, (int, float)) else "string"


def leftovers(model, at="$"):
    """Members the generated models did not know, at any depth (openapi-python-client keeps them aside)."""
    found = []
    extra = getattr(model, "additional_properties", None)
    if extra:
        found.append(f"{at}: {sorted(extra)}")
    if isinstance(model, list):
        for i, item in enumerate(model):
            found += leftovers(item, f"{at}[{i}]")
    elif hasattr(model, "__attrs_attrs__"):
        for field in model.__attrs_attrs__:
            if field.name != "additional_properties":
                found += leftovers(getattr(model, field.name), f"{at}.{field.name}")
    return found


class Scenario:
    def __init__(self, base, token, work, report):
        sys.path.insert(0, str(work))
        self.api = importlib.import_module("bridge_api")
        self.models = importlib.import_module("bridge_api.models")
        self.pydantic = importlib.import_module("bridge_models")
        self.client = self.api.AuthenticatedClient(base_url=base, token=token, timeout=30.0)
        self.anonymous = self.api.Client(base_url=base, timeout=30.0)
        self.report = report

    def op(self, module):
        area, name = module.split(".")
        return importlib.import_module(f"bridge_api.api.{area}.{name}")

    def call(self, name, operation, response, status, model, pydantic):
        """Checks one answer: its status, the generated model it parsed into, exactly, and the pydantic model."""
        body = json.loads(response.content) if response.content else None
        entry = {"name": name, "operation": operation, "status": int(response.status_code)}
        self.report["calls"].append(entry)
        parsed = response.parsed
        entry["model"] = type(parsed).__name__ if not isinstance(parsed, list) else f"list[{type(parsed[0]).__name__}]"
        if int(response.status_code) != status:
            raise AssertionError(f"{name}: status {response.status_code}, expected {status}: {body}")
        if entry["model"] not in ({model} if isinstance(model, str) else set(model)):
            raise AssertionError(f"{name}: parsed into {entry['model']}, expected {model}")
        written = [p.to_dict() for p in parsed] if isinstance(parsed, list) else parsed.to_dict()
        if shape(written) != shape(body):
            raise AssertionError(f"{name}: {entry['model']} writes back {written}, the answer was {body}")
        unknown = leftovers(parsed)
        if unknown:
            raise AssertionError(f"{name}: members {entry['model']} does not know: {unknown}")
        from pydantic import TypeAdapter

        if pydantic.startswith("list:"):
            TypeAdapter(list[getattr(self.pydantic, pydantic[5:])]).validate_python(body)
        else:
            getattr(self.pydantic, pydantic).model_validate(body)
        entry["pydantic"] = pydantic
        return parsed

    def quote(self, amount):
        """A single-token bridge quote of `amount` USDC (not checked on this side: a bad one is the server's 400)."""
        body = self.models.BridgeQuoteRequest.from_dict({
            "token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": amount, "mode": "pay",
            "depositor": EVM_A, "recipient": EVM_B})
        return self.op("quotes.quote_bridge").sync_detailed(client=self.client, body=body)

    def history(self, client):
        """The first page of the history, newest first, as `client` (with or without credentials) asks for it."""
        m = self.models
        return self.op("history.list_bridge_history").sync_detailed(
            client=client, page=1, limit=10, sort_by=m.HistorySortBy("createdAt"), sort_direction=m.SortDirection("desc"))

    def run(self):
        m = self.models
        quote = self.call(
            "quote a bridge", "quoteBridge",
            self.quote("100"), 200, "BridgeQuote", "QuoteResponse")
        self.call(
            "quote a bridge with a swap", "quoteBridgeSwap",
            self.op("quotes.quote_bridge_swap").sync_detailed(client=self.client, body=m.BridgeSwapQuoteRequest.from_dict({
                "tokenIn": "ETH", "tokenOut": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "0.05",
                "mode": "pay", "depositor": EVM_A, "recipient": EVM_B})),
            200, "BridgeSwapQuote", "QuoteResponse")
        self.call(
            "commit", "commitQuote",
            self.op("quotes.commit_quote").sync_detailed(quote.quote_id, client=self.client),
            200, "QuoteCommitted", "QuoteCommitted")
        bridge = self.op("history.get_bridge")
        pending = self.call(
            "the bridge", "getBridge", bridge.sync_detailed(quote.quote_id, client=self.client),
            200, "BridgeRecordBridgePending", "BridgeRecord")
        # The feed is read from the bridge's creation on (the sandbox's clock is not the wall clock).
        started = int(pending.created_at.timestamp() * 1000)
        self.call(
            "history", "listBridgeHistory",
            self.history(self.client), 200, "HistoryPage", "HistoryPage")
        self.call(
            "sandbox deposit", "sandboxDepositBridge",
            self.op("sandbox.sandbox_deposit_bridge").sync_detailed(
                quote.quote_id, client=self.client, body=m.SandboxBridgeDepositRequest.from_dict({})),
            200, "BridgeRecordBridgePendingConfirmation", "BridgeRecord")
        advance = self.op("sandbox.sandbox_advance_clock")
        deadline = time.monotonic() + 60
        while True:
            self.call(
                "advance the sandbox clock", "sandboxAdvanceClock",
                advance.sync_detailed(client=self.client, body=m.SandboxAdvanceClockRequest.from_dict({"ms": 300_000})),
                200, "SandboxClock", "SandboxClock")
            state = bridge.sync_detailed(quote.quote_id, client=self.client).parsed.state
            if str(getattr(state, "value", state)) == "EXECUTED" or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        self.call(
            "the bridge, executed", "getBridge", bridge.sync_detailed(quote.quote_id, client=self.client),
            200, "BridgeRecordBridgeExecuted", "BridgeRecord")

        events = self.op("webhooks.list_user_events")
        page_token, kinds, pages = None, set(), 0
        while True:
            kwargs = {"page_token": page_token} if page_token else {}
            page = self.call(
                "event feed page", "listUserEvents",
                events.sync_detailed(client=self.client, since_timestamp=started, page_size=2, **kwargs),
                200, "UserEventsPage", "UserEventsPage")
            kinds.update(e.field_tag.value if hasattr(e.field_tag, "value") else e.field_tag for e in page.items)
            pages += 1
            page_token = page.next_page_token if isinstance(page.next_page_token, str) else None
            if not page_token:
                break
        for kind in ["BRIDGE_PENDING", "BRIDGE_ACCEPTED", "BRIDGE_EXECUTED"]:
            if kind not in kinds:
                raise AssertionError(f"the event feed has no {kind} ({sorted(kinds)}, {pages} pages)")

        self.call(
            "create deposit addresses", "createDepositAddresses",
            self.op("deposit_addresses.create_deposit_addresses").sync_detailed(
                client=self.client, body=m.DepositAddressCreateRequest.from_dict({
                    "depositChains": ["ETHEREUM", "ARBITRUM"], "destinationChain": "BASE",
                    "destinationAddress": EVM_B, "addressNote": "python client"})),
            200, "list[DepositAddress]", "list:DepositAddress")
        found = self.call(
            "search deposit addresses", "searchDepositAddresses",
            self.op("deposit_addresses.search_deposit_addresses").sync_detailed(
                client=self.client, address_note="python client"),
            200, "DepositAddressSearchPage", "DepositAddressSearchPage")
        if len(found.items) != 2:
            raise AssertionError(f"the search found {len(found.items)} addresses, expected 2")

        self.call(
            "a 400: an amount that is no decimal", "quoteBridge",
            self.quote("a lot"), 400, "HttpApiDecodeError", "BadRequest")
        self.call(
            "a 401: no credentials", "listBridgeHistory",
            self.history(self.anonymous), 401, "Unauthorized", "Unauthorized")
        self.call(
            "a 422: a bridge that does not exist", "getBridge",
            bridge.sync_detailed("no-such-bridge", client=self.client),
            422, "InvalidRequest", "InvalidRequest")


def production_payloads(fixtures, report):
    """Production's payloads (tests/fixtures/production: every event kind, record family and state, written from
    the official SDK's types, records without `_tag` among them) parse with the pydantic models of their
    components."""
    models = importlib.import_module("bridge_models")
    failures, checked = [], 0
    for path in sorted(Path(fixtures).glob("*.json")):
        fixture = json.loads(path.read_text())
        try:
            getattr(models, fixture["type"]).model_validate(fixture["payload"])
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failures.append(f"{path.name} ({fixture['type']}): {e}")
        checked += 1
    report["productionPayloads"] = {"checked": checked, "failures": failures}


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    base, token, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    report = {"generators": {}, "calls": [], "error": None}
    try:
        generate(base, work, report)
        Scenario(base, token, work, report).run()
        if os.environ.get("PRODUCTION_FIXTURES"):
            production_payloads(os.environ["PRODUCTION_FIXTURES"], report)
    except Exception:  # the report says what failed; the Rust test prints it
        report["error"] = traceback.format_exc()
    print(json.dumps(report))
    sys.exit(1 if report["error"] else 0)


if __name__ == "__main__":
    main()
