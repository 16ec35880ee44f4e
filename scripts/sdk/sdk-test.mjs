#!/usr/bin/env node
// Drives the production service's official TypeScript SDK (`@rhino.fi/sdk`, installed by install.sh) against a
// server of this contract, with the SDK's own HTTP clients (openapi-fetch, `Authorization: <jwt>` without a
// scheme, as the SDK sends it), and verifies every webhook the server delivers with the SDK's own
// `isSignatureValid`. The sandbox helpers (not part of production) are called with plain fetch to move bridges
// and deposits through their lifecycle.
//
// Run by the Rust test `the_official_sdk_works_against_the_sandbox` (crates/bridge-sandbox/tests/it/sdk.rs), which starts
// the sandbox, passes its base URL and a project token, and checks the JSON report this prints on stdout:
//   { calls: [{ name, operation, status, body }], deliveries: [{ eventId, tag, verified }], feed: [eventId...] }
// Run by hand with: node scripts/sdk/sdk-test.mjs http://127.0.0.1:8080 "$(bridge-sandbox token --project p)" \
//   "$(bridge-sandbox api-key --project p)"
// The API key (third argument) is given to a second bridge client, which exchanges it for a JWT itself
// (`POST /authentication/auth/apiKey`), as the SDK does for every key that is not a JWT.

import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const SDK = process.env.SDK_DIR ?? path.join(here, 'node_modules', '@rhino.fi', 'sdk');
// The SDK's clients are imported by file path (its package exports only the root and the chain adapters).
const load = (rel) => import(pathToFileURL(path.join(SDK, 'dist', 'esm', rel)).href);

const [base, jwt, apiKey] = process.argv.slice(2);
if (!base || !jwt || !apiKey) {
  console.error('usage: sdk-test.mjs <base-url> <project JWT> <project API key>');
  process.exit(2);
}
const EVM_A = '0x1111111111111111111111111111111111111111';
const EVM_B = '0x2222222222222222222222222222222222222222';

const { makeAuthApi } = await load('api/auth/auth-api.js');
const { makeBridgeApiClient } = await load('api/bridge/bridge-client.js');
const { makeBridgeApi } = await load('api/bridge/bridge-api.js');
const { makeSdaApiClient } = await load('api/sda/sda-client.js');
const { makeDepositAddressesApi } = await load('api/deposit-addresses.js');
const { makeWebhookApiClient } = await load('api/webhook/webhook-client.js');
const { makeWebhookApi } = await load('api/webhook/webhook-api.js');

// As RhinoSdk() wires them (sdk.js), per area of the base URL.
const authApi = makeAuthApi(`${base}/authentication`);
const bridgeClient = makeBridgeApiClient({ apiKey: jwt, apiUrl: `${base}/bridge`, authApi });
const sdaClient = makeSdaApiClient({ apiKey: jwt, apiUrl: `${base}/sda`, authApi });
const webhookClient = makeWebhookApiClient({ apiKey: jwt, apiUrl: `${base}/webhook`, authApi });
const bridge = makeBridgeApi(bridgeClient);
// The same project through its API key: the SDK's client exchanges it for a JWT on its first request.
const keyedBridge = makeBridgeApi(makeBridgeApiClient({ apiKey, apiUrl: `${base}/bridge`, authApi }));
const addresses = makeDepositAddressesApi(bridgeClient, sdaClient);
const webhook = makeWebhookApi(webhookClient);

// ------------------------------------------------------------------------------------ webhook receiver

const deliveries = [];
let lastDelivery = null;
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', async () => {
    try {
      const payload = JSON.parse(body);
      const signature = req.headers['x-webhook-signature'] ?? '';
      const verified = await webhook.isSignatureValid(payload, signature);
      lastDelivery = { payload, signature };
      deliveries.push({ eventId: payload.eventId, tag: payload.event?._tag, verified });
      res.writeHead(verified ? 204 : 400).end();
    } catch (e) {
      // What arrived, so that a failure says who sent what (the request line, its length, its first bytes).
      const seen = `${req.method} ${req.url}, content-length ${req.headers['content-length']}, ${body.length} bytes`;
      deliveries.push({ eventId: null, tag: null, verified: false, error: `${e} (${seen}: ${body.slice(0, 80)})` });
      res.writeHead(400).end();
    }
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const webhookUrl = `http://127.0.0.1:${receiver.address().port}/hooks/sdk`;

// ------------------------------------------------------------------------------------ calls

const calls = [];
// Records one answer of the SDK's clients (openapi-fetch: { data, error, response }).
async function call(name, operation, promise) {
  const { data, error, response } = await promise;
  calls.push({ name, operation, status: response.status, body: data ?? error ?? null });
  if (!response.ok) {
    throw new Error(`${name} answered ${response.status}: ${JSON.stringify(error)}`);
  }
  return data;
}

// The sandbox's own helpers: plain fetch, Bearer token.
async function helper(method, rel, body) {
  const response = await fetch(`${base}${rel}`, {
    method,
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${rel} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

const started = Date.now() - 3600_000;
try {
  await call('public key', 'getWebhookPublicKey', webhookClient.GET('/public-key'));
  // Production endpoints beyond the spec, through the SDK's own method and client.
  await call('getBridgeConfig', 'getBridgeConfigs', bridge.getBridgeConfig());
  await call('GET /bridge-swap-token-configs', 'getBridgeSwapTokenConfigs', bridgeClient.GET('/bridge-swap-token-configs'));

  // Both quote calls of the SDK (getUserQuote is a bridge-swap quote with the same token on both sides), and the
  // deprecated single-token path through the SDK's own client.
  const quote = await call(
    'getUserQuote',
    'quoteBridgeSwap',
    bridge.getUserQuote({
      token: 'USDC', chainIn: 'ETHEREUM', chainOut: 'BASE', amount: '100', mode: 'pay',
      depositor: EVM_A, recipient: EVM_B, webhookUrl,
    }),
  );
  const swap = await call(
    'getSwapUserQuote',
    'quoteBridgeSwap',
    bridge.getSwapUserQuote({
      tokenIn: 'ETH', tokenOut: 'USDC', chainIn: 'ETHEREUM', chainOut: 'BASE', amount: '0.05', mode: 'pay',
      depositor: EVM_A, recipient: EVM_B, webhookUrl,
    }),
  );
  await call(
    'POST /quote/user',
    'quoteBridge',
    bridgeClient.POST('/quote/user', {
      body: { token: 'USDC', chainIn: 'ETHEREUM', chainOut: 'ARBITRUM', amount: '25', mode: 'receive', depositor: EVM_A, recipient: EVM_B },
    }),
  );

  await call('commitQuote', 'commitQuote', bridge.commitQuote(quote.quoteId));
  await call('commitQuote (swap)', 'commitQuote', bridge.commitQuote(swap.quoteId));
  await call('getBridgeStatus', 'getBridge', bridge.getBridgeStatus(quote.quoteId));
  // Cancelling (production beyond the spec) through the SDK's own method, and the cursor history.
  const toCancel = await call(
    'getUserQuote (to cancel)',
    'quoteBridgeSwap',
    bridge.getUserQuote({
      token: 'USDC', chainIn: 'ETHEREUM', chainOut: 'BASE', amount: '10', mode: 'pay',
      depositor: EVM_A, recipient: EVM_B, webhookUrl,
    }),
  );
  await call('commitQuote (to cancel)', 'commitQuote', bridge.commitQuote(toCancel.quoteId));
  await call('cancelBridge', 'cancelBridge', bridge.cancelBridge(toCancel.quoteId));
  await call(
    'GET /history-cursor/user',
    'listBridgeHistoryCursor',
    bridgeClient.GET('/history-cursor/user', { params: { query: { sortBy: 'createdAt', sortDirection: 'asc', pageSize: '2' } } }),
  );
  await call('getUserBridgeHistoryCursor', 'listBridgeHistoryCursor', bridge.getUserBridgeHistoryCursor({ pageSize: 2 }));
  await call('getRateLimitStatus', 'getDepositAddressRateLimitStatus', addresses.getRateLimitStatus());
  await call('getSupportedTokens', 'getDepositAddressSupportedTokens', addresses.getSupportedTokens({ depositChain: 'ETHEREUM', destinationChain: 'BASE' }));

  // The API key: exchanged by the SDK's auth API itself, and by a client given the key instead of a JWT.
  const exchanged = await authApi.getJwt(apiKey);
  calls.push({ name: 'authApi.getJwt', operation: 'exchangeApiKey', status: 200, body: { jwt: exchanged.jwt } });
  await call(
    'getUserBridgeHistory (API key)',
    'listBridgeHistory',
    keyedBridge.getUserBridgeHistory({ page: 1, limit: 5, sortBy: 'createdAt', sortDirection: 'desc' }),
  );

  // The bridges go through their lifecycle (sandbox helpers), so that their events are delivered.
  await helper('POST', `/sandbox/bridges/${quote.quoteId}/deposit`, {});
  await helper('POST', `/sandbox/bridges/${swap.quoteId}/deposit`, {});
  for (let i = 0; i < 6; i++) await helper('POST', '/sandbox/clock/advance', { ms: 300_000 });
  const executed = await call('getBridgeStatus (executed)', 'getBridge', bridge.getBridgeStatus(quote.quoteId));
  await call('getBridgeStatusByDepositHash', 'getBridgesByDepositHash', bridge.getBridgeStatusByDepositHash(executed.depositTxHash));
  await call('getBridgeStatusByWithdrawHash', 'getBridgeByWithdrawHash', bridge.getBridgeStatusByWithdrawHash(executed.withdrawTxHash));
  await call(
    'getUserBridgeHistory',
    'listBridgeHistory',
    bridge.getUserBridgeHistory({ page: 1, limit: 20, sortBy: 'createdAt', sortDirection: 'desc' }),
  );

  const created = await call(
    'depositAddresses.create',
    'createDepositAddresses',
    addresses.create({
      depositChains: ['ETHEREUM', 'ARBITRUM'], destinationChain: 'BASE', destinationAddress: EVM_B,
      addressNote: 'sdk test', webhookUrl,
    }),
  );
  await call('depositAddresses.search', 'searchDepositAddresses', addresses.search({ addressNote: 'sdk test' }));
  await helper('POST', `/sandbox/deposit-addresses/${created[0].depositAddress}/ETHEREUM/deposits`, { token: 'USDC', amount: '20' });
  await helper('POST', `/sandbox/deposit-addresses/${created[0].depositAddress}/ETHEREUM/deposits`, { token: 'NOPE', amount: '1' });
  for (let i = 0; i < 4; i++) await helper('POST', '/sandbox/clock/advance', { ms: 300_000 });
  await call(
    'depositAddresses.getPublicStatus',
    'getDepositAddressPublicStatus',
    addresses.getPublicStatus({ depositAddress: created[0].depositAddress, depositChain: 'ETHEREUM', destinationAddress: EVM_B }),
  );
  const where = { depositAddress: created[0].depositAddress, depositChain: 'ETHEREUM' };
  await call('depositAddresses.getStatus', 'getDepositAddressStatus', addresses.getStatus(where));
  await call('depositAddresses.getHistory', 'getDepositAddressHistory', addresses.getHistory(where));
  await call('depositAddresses.getCompletedRefunds', 'getDepositAddressCompletedRefunds', addresses.getCompletedRefunds(where));
  await helper('POST', '/sandbox/webhook-test', { webhookUrl, message: 'from the sdk test' });

  // The event feed, page by page, through the SDK.
  const feed = [];
  let pageToken;
  do {
    const page = await call(
      'getUserEvents',
      'listUserEvents',
      webhook.getUserEvents({ sinceTimestamp: started, pageSize: 20, ...(pageToken ? { pageToken } : {}) }),
    );
    feed.push(...page.items);
    pageToken = page.nextPageToken ?? undefined;
  } while (pageToken);

  // Every event of the project went to the receiver (they all name it); wait for the deliveries.
  const deadline = Date.now() + 30_000;
  while (new Set(deliveries.map((d) => d.eventId)).size < feed.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
  }
  // A control: the verifier is not vacuous, a delivery with one member changed does not verify.
  let tamperedVerifies = null;
  if (lastDelivery) {
    const tampered = { ...lastDelivery.payload, eventId: `${lastDelivery.payload.eventId}x` };
    tamperedVerifies = await webhook.isSignatureValid(tampered, lastDelivery.signature);
  }
  const report = { calls, deliveries, feedLength: feed.length, feedKinds: [...new Set(feed.map((e) => e._tag))], tamperedVerifies };
  process.stdout.write(JSON.stringify(report));
} catch (e) {
  process.stdout.write(JSON.stringify({ calls, deliveries, error: String(e?.stack ?? e) }));
  process.exitCode = 1;
} finally {
  receiver.close();
}
