#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/ (deterministic; re-run after changing the
fixtures). The webhook seeds are signed with Node's crypto and the client crate's test key signer_a, exactly as
the service signs (RSA PKCS#1 v1.5 over SHA-256 of the hex SHA-256 digest of JSON.stringify(JSON.parse(body))).

    python3 fuzz/seed.py
"""
import hashlib
import json
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent
REPO = ROOT.parent
CORPUS = ROOT / "corpus"
EVM_A = "0x1111111111111111111111111111111111111111"
EVM_B = "0x2222222222222222222222222222222222222222"
OPS = ["quoteBridge", "quoteBridgeSwap", "commitQuote", "listBridgeHistory", "getBridge", "createDepositAddresses",
       "createDepositAddressesLegacy", "searchDepositAddresses", "searchDepositAddressesLegacy",
       "getDepositAddressPublicStatus", "getWebhookPublicKey", "listUserEvents", "sandboxDepositBridge",
       "sandboxDepositIntoAddress", "sandboxAdvanceClock", "sandboxSendWebhookTest", "sandboxListWebhookDeliveries"]


def write(target, name, data: bytes):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def request(name, op, ct, path="", query="", body=""):
    body = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
    data = bytes([OPS.index(op), ct]) + f"{path}\n{query}\n".encode() + body.encode()
    write("request_decoder", name, data)


quote = {"token": "USDC", "chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "100.25", "mode": "pay",
         "depositor": EVM_A, "recipient": EVM_B, "webhookUrl": "https://example.com/hook"}
request("quote-valid", "quoteBridge", 1, body=quote)
request("quote-post-bridge", "quoteBridge", 1, body=dict(quote, amountNative="0.01", isSda="true",
        postBridgeData={"_tag": "extended", "data": "0xabcdef"}))
request("quote-invalid", "quoteBridge", 1, body=dict(quote, mode="swap", recipient=12345))
request("quote-malformed", "quoteBridge", 2, body='{"token":"USDC","amount":1e400,')
request("quote-form", "quoteBridge", 4, body="token=USDC&chainIn=ETHEREUM&amount=1&amount=2")
request("quote-text", "quoteBridge", 3, body="hello")
request("swap-valid", "quoteBridgeSwap", 1, body={"chainIn": "ETHEREUM", "chainOut": "BASE", "amount": "3", "mode": "receive",
        "tokenIn": "ETH", "tokenOut": "USDC", "depositor": EVM_A, "recipient": EVM_B, "slippage": 0.5})
request("commit", "commitQuote", 0, path="5e5d771ee66a08e3a79ace2c")
request("history", "listBridgeHistory", 0, query="page=1&limit=20&sortBy=createdAt&sortDirection=desc&state=EXECUTED")
request("history-bad", "listBridgeHistory", 0, query="page=1e3&page=2&limit=%20&sortBy=x")
request("get-bridge", "getBridge", 0, path="04c0e6e2b75a2677f3851a59", query="bridgeId=x")
request("sda-create", "createDepositAddresses", 1, body={"depositChains": ["ETHEREUM", "ARBITRUM"], "destinationChain": "BASE",
        "destinationAddress": EVM_B, "addressNote": "  note  ", "reusePolicy": "create-new", "webhookUrl": "https://example.com/h",
        "refundAddress": EVM_A})
request("sda-create-legacy", "createDepositAddressesLegacy", 1, body={"depositChains": ["STELLAR"], "destinationChain": "BASE",
        "destinationAddress": EVM_B, "webhookUrl": ""})
request("sda-search", "searchDepositAddresses", 0, query="pageSize=20&depositChain=ETHEREUM&pageToken=abc")
request("sda-search-legacy", "searchDepositAddressesLegacy", 0, query="pageSize=0x10&addressNote=%F0%9F%98%80")
request("sda-status", "getDepositAddressPublicStatus", 0, path="0xb2446eab79f789d779e1333ec402daad332954eb/ETHEREUM",
        query="destinationAddress=" + EVM_B)
request("public-key", "getWebhookPublicKey", 0)
request("events", "listUserEvents", 0, query="sinceTimestamp=0&pageSize=50&pageToken=000000000000000000000032")
request("events-odd", "listUserEvents", 0, query="sinceTimestamp=-Infinity&pageSize=%20%201e1%20")
request("sandbox-deposit", "sandboxDepositBridge", 1, path="04c0e6e2b75a2677f3851a59", body={"txHash": "0xabc"})
request("sandbox-deposit-empty", "sandboxDepositBridge", 0, path="x")
request("sandbox-address-deposit", "sandboxDepositIntoAddress", 1, path="MCPIR7IBHYSITWPRLTMRMSWQAAJXQZYPTW5XA4NHVZVJPI5JYCLOAAAAAAAAAAAAALTNA/STELLAR",
        body={"token": "USDT", "amount": "1000000", "sender": "GCPIR7IBHYSITWPRLTMRMSWQAAJXQZYPTW5XA4NHVZVJPI5JYCLOBJ7O"})
request("advance", "sandboxAdvanceClock", 1, body={"ms": 60000})
request("advance-huge", "sandboxAdvanceClock", 1, body='{"ms": 1e300}')
request("webhook-test", "sandboxSendWebhookTest", 1, body={"webhookUrl": "http://127.0.0.1:9/h", "message": "hi"})
request("deliveries", "sandboxListWebhookDeliveries", 0, query="eventId=evt_96812efebf0fb7a612548107")

page_bytes = (REPO / "benches/fixtures/events-page-50.json").read_bytes()
page = json.loads(page_bytes)
write("event_decoder", "page-50", page_bytes)
seen = {}
for i, e in enumerate(page["items"]):
    seen.setdefault(e["_tag"], []).append(e)
    write("event_decoder", f"event-{i:02}-{e['_tag'].lower()}", json.dumps(e, separators=(",", ":")).encode())
write("event_decoder", "webhook-test", b'{"_tag":"WEBHOOK_TEST","type":"test","message":"hello \\u00e9 \\ud83d\\ude00"}')
write("event_decoder", "unknown-kind", b'{"_tag":"BRIDGE_TELEPORTED","x":1}')
envelopes = [{"event": e, "eventId": f"evt_{i:024x}", "ts": 1763723730599 + i} for i, e in
             enumerate([v[0] for v in seen.values()] + [{"_tag": "WEBHOOK_TEST", "type": "test", "message": "hi"}])]
for i, env in enumerate(envelopes):
    write("event_decoder", f"envelope-{i:02}", json.dumps(env, separators=(",", ":")).encode())

# Webhook deliveries, signed by Node (the same signing the service does).
key = (REPO / "crates/bridge-client/tests/fixtures/signer_a.key.pem").read_text()
bodies = [json.dumps(env, indent=1) for env in envelopes[:4]]  # pretty-printed: the verifier canonicalises
node = r"""
const crypto = require('crypto');
const [key, ...bodies] = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = bodies.map(b => {
  const canonical = JSON.stringify(JSON.parse(b));
  const digest = crypto.createHash('sha256').update(canonical).digest('hex');
  return crypto.sign('sha256', Buffer.from(digest), key).toString('hex');
});
process.stdout.write(JSON.stringify(out));
"""
sigs = json.loads(subprocess.run(["node", "-e", node], input=json.dumps([key] + bodies), capture_output=True, text=True, check=True).stdout)
for i, (body, sig) in enumerate(zip(bodies, sigs)):
    write("webhook_verifier", f"signed-{i:02}", f"{sig}\n{body}".encode())
    write("webhook_verifier", f"signed-{i:02}-upper", f"  {sig.upper()}  \n{body}".encode())
    write("webhook_verifier", f"tampered-{i:02}", f"{sig}\n{body.replace('evt_', 'evt-', 1)}".encode())
write("webhook_verifier", "not-hex", b"zz\n{}")
write("webhook_verifier", "empty", b"\n")
write("webhook_verifier", "short-sig", b"abcd\n{\"event\":1}")
print("seeded", {t.name: len(list(t.iterdir())) for t in sorted(CORPUS.iterdir())})
