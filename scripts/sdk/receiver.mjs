#!/usr/bin/env node
// A webhook receiver built on the production service's official SDK (`@rhino.fi/sdk`, installed by install.sh):
// every delivery is verified with the SDK's own `isSignatureValid` (which fetches the service's public key), as a
// team integrating with production would. It refuses a delivery without a valid signature (401) or whose `ts` is
// more than 5 minutes from its clock (401: a replay), acknowledges a duplicate of an event it handled (204, by
// `eventId`), and acknowledges events of kinds and with members it does not know (it reads only what it needs).
//
// Run with:
//   scripts/sdk/install.sh
//   node scripts/sdk/receiver.mjs http://127.0.0.1:8080 [PORT]
// It listens on 127.0.0.1 (PORT, or a free port) and prints `listening http://127.0.0.1:PORT/webhooks/bridge`
// on stdout; point a quote's `webhookUrl`, or the receiver check (`bridge-conformance receiver --url ...`), there.
// The Rust test `the_receiver_check_passes_a_receiver_on_the_sdks_verifier` (crates/bridge-sandbox/tests/it/sdk.rs)
// starts it against a fresh sandbox and runs the receiver check against it.

import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const SDK = process.env.SDK_DIR ?? path.join(here, 'node_modules', '@rhino.fi', 'sdk');
const load = (rel) => import(pathToFileURL(path.join(SDK, 'dist', 'esm', rel)).href);

const [base, port = '0'] = process.argv.slice(2);
if (!base) {
  console.error('usage: receiver.mjs <base URL of the service> [port]');
  process.exit(2);
}

const { makeWebhookApiClient } = await load('api/webhook/webhook-client.js');
const { makeWebhookApi } = await load('api/webhook/webhook-api.js');
// The public key needs no credential: no API key, no auth API.
const webhook = makeWebhookApi(makeWebhookApiClient({ apiKey: '', apiUrl: `${base}/webhook` }));

const MAX_AGE_MS = 5 * 60 * 1000;
const MAX_BODY_BYTES = 1 << 20;
// The ids of the events handled, oldest first (a production receiver keeps them in its database).
const handled = new Set();
const remember = (eventId) => {
  handled.add(eventId);
  if (handled.size > 100_000) handled.delete(handled.values().next().value);
};

// What this integration does with an event: only the kinds it knows; any other is acknowledged and ignored.
const handle = (event) => {
  switch (event?._tag) {
    case 'BRIDGE_EXECUTED':
      console.error(`bridge ${event._id} executed: ${event.amountOut} to ${event.recipient}`);
      break;
    case 'BRIDGE_CANCELLED':
    case 'BRIDGE_REFUNDED':
      console.error(`bridge ${event._id}: ${event._tag}`);
      break;
    default:
      break;
  }
};

const answer = (res, status, text) => {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text ?? '');
};

const receive = async (req, body) => {
  const signature = req.headers['x-webhook-signature'];
  if (typeof signature !== 'string' || signature.length === 0) return [401, 'no signature'];
  let payload;
  try {
    payload = JSON.parse(body);
  } catch {
    return [400, 'the body is not JSON'];
  }
  let valid = false;
  try {
    valid = await webhook.isSignatureValid(payload, signature);
  } catch (e) {
    // A signature that cannot even be checked is no valid one (fail closed).
    console.error(`signature check failed: ${e}`);
  }
  if (!valid) return [401, 'the signature does not verify'];
  if (typeof payload.ts !== 'number' || Math.abs(Date.now() - payload.ts) > MAX_AGE_MS) {
    return [401, 'ts outside the 5-minute window: a replay?'];
  }
  if (typeof payload.eventId !== 'string') return [400, 'no eventId'];
  if (handled.has(payload.eventId)) return [204];
  handle(payload.event);
  remember(payload.eventId);
  return [204];
};

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/webhooks/bridge') return answer(res, 404);
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    receive(req, Buffer.concat(chunks).toString('utf8')).then(
      ([status, text]) => answer(res, status, text),
      (e) => answer(res, 500, String(e)),
    );
  });
});
server.listen(Number(port), '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${server.address().port}/webhooks/bridge`);
});
