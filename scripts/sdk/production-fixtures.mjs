#!/usr/bin/env node
// Writes payloads shaped exactly as the production service's TypeScript types say (the generated `*.d.ts` of the
// official SDK, `@rhino.fi/sdk`), one JSON file per event kind variant, record family/state, quote variant, page
// and error body, into tests/fixtures/production/. They are written from the SDK's types, not from our sandbox:
// every member the production type has is present in the `full` payload, only its required members in the
// `minimal` one. `cargo test` decodes each into the contract type named in the file and encodes it back.
//
// Run with:  scripts/sdk/install.sh && node scripts/sdk/production-fixtures.mjs
// (the test `production_payloads_match_the_pinned_sdk` in the SDK test regenerates them in memory and fails when
// the committed files differ).
//
// Brand words are neutralised as the spec does (post-bridge-data tags, aggregator names): see BRAND below.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'package.json'));
const ts = require('typescript');

const SDK = process.env.SDK_DIR ?? path.join(here, 'node_modules', '@rhino.fi', 'sdk');
const OUT = process.argv[2] ?? path.join(here, '..', '..', 'tests', 'fixtures', 'production');

// The spec replaces brand words by neutral ones (spec 2.5 and 2.6); production payloads are mapped the same way.
export const BRAND = {
  starkwarebtcfi: 'partnerbtcfi',
  wirexwrap: 'partnerwrap',
  wirexwrapsandbox: 'partnerwrapsandbox',
  starkwarebtcfiv2: 'partnerbtcfiv2',
  aavev3supply: 'partnerv3supply',
  rocketfoundationdeposit: 'partnerfoundationdeposit',
  mapledeposit: 'partnerdeposit1',
  KYBERSWAP: 'AGGREGATOR_A',
  RHINO: 'AGGREGATOR_B',
  ONEINCH: 'AGGREGATOR_C',
  BEBOP: 'AGGREGATOR_D',
};

// ---------------------------------------------------------------------------------------------- type walking

function load(file) {
  const program = ts.createProgram([file], { strict: true, noResolve: true });
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(file);
  const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(sf));
  const get = (name) => checker.getDeclaredTypeOfSymbol(exports.find((s) => s.name === name));
  const prop = (type, name) => {
    const s = type.getProperty(name);
    return s && checker.getTypeOfSymbolAtLocation(s, sf);
  };
  return { checker, sf, get, prop };
}

// A type node of the walk: {kind, ...} with `ref` naming the production scalar alias where there is one.
function walk(env, type, refName) {
  const { checker, sf } = env;
  const f = type.flags;
  if (f & ts.TypeFlags.StringLiteral) return { kind: 'literal', value: type.value };
  if (f & ts.TypeFlags.NumberLiteral) return { kind: 'literal', value: type.value };
  if (f & ts.TypeFlags.String) return { kind: 'string', ref: refName };
  if (f & ts.TypeFlags.Number) return { kind: 'number', ref: refName };
  if (f & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) return { kind: 'boolean' };
  if (f & ts.TypeFlags.Null) return { kind: 'null' };
  if (f & ts.TypeFlags.Undefined) return { kind: 'undefined' };
  if (f & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return { kind: 'unknown' };
  if (type.isUnion()) {
    const members = type.types.map((t) => walk(env, t, refName));
    const bools = members.filter((m) => m.kind === 'boolean');
    const rest = members.filter((m) => m.kind !== 'boolean' && m.kind !== 'undefined');
    if (bools.length) rest.push({ kind: 'boolean' });
    // An enum of string literals stays one node.
    if (rest.every((m) => m.kind === 'literal')) return { kind: 'enum', values: rest.map((m) => m.value) };
    return rest.length === 1 ? rest[0] : { kind: 'union', of: rest };
  }
  if (checker.isTupleType(type)) return { kind: 'tuple', items: checker.getTypeArguments(type).map((t) => walk(env, t)) };
  if (checker.isArrayType(type)) return { kind: 'array', items: walk(env, checker.getTypeArguments(type)[0]) };
  if (f & ts.TypeFlags.Object) {
    const props = [];
    for (const p of checker.getPropertiesOfType(type)) {
      const decl = p.valueDeclaration ?? p.declarations?.[0];
      const typeText = decl?.type ? decl.type.getText(sf) : '';
      // The production alias of a scalar member (`BigDecimalFromString`, `DateFromString`, ...), also when nullable.
      const ref = (typeText.match(/^components\['schemas'\]\['([A-Za-z0-9_]+)'\](\s*\|\s*null)?$/) ?? [])[1];
      const optional = (p.flags & ts.SymbolFlags.Optional) !== 0;
      const jsdoc = decl ? (decl.getFullText(sf).match(/\/\*\*([\s\S]*?)\*\//) ?? [])[1] ?? '' : '';
      const maxItems = Number((jsdoc.match(/maxItems\((\d+)\)/) ?? [])[1] ?? NaN);
      props.push({ name: p.name, optional, maxItems, type: walk(env, checker.getTypeOfSymbolAtLocation(p, decl ?? sf), ref) });
    }
    const index = checker.getIndexInfosOfType(type);
    return { kind: 'object', props, index: index.length ? walk(env, index[0].type) : undefined };
  }
  return { kind: 'unknown' };
}

// ---------------------------------------------------------------------------------------------- values

const DECIMAL_STRINGS = new Set(['BigDecimalFromString', 'BigDecimal', 'AmountWithDecimals']);
const DATES = new Set(['DateFromString', 'DateTimeUtc']);

// A realistic value for a string member, from its name (and the production alias of its type).
function stringFor(name, ref, n) {
  // Decimal members: by production alias, and plain `string` amounts and fees (production writes decimals there too,
  // as production does for the quote errors' amounts: docs/production.md, "Error bodies").
  if ((ref && DECIMAL_STRINGS.has(ref)) || (!ref && /(amount|fee|cost)$/i.test(name) && !/^amountWei$/.test(name))) {
    return name.toLowerCase().includes('fee') ? '0.125' : `1${n}0.25`;
  }
  if (ref && DATES.has(ref)) return `2026-03-0${1 + (n % 9)}T10:2${n % 10}:30.${100 + n}Z`;
  if (ref === 'BigInt') return `1${n}0250000`;
  const lower = name.toLowerCase();
  // Plain `string` members that hold dates in production (`expiresAt`, `createdAt` of additional steps).
  if (/(At|Timestamp)$/.test(name)) return `2026-03-0${1 + (n % 9)}T11:4${n % 10}:00.${200 + n}Z`;
  if (lower.endsWith('chain') || lower === 'chainin' || lower === 'from') return 'ETHEREUM';
  if (lower === 'chainout' || lower === 'to' || lower === 'refundedchain') return 'BASE';
  if (lower.includes('hash')) return `0x${'ab'.repeat(31)}${String(n).padStart(2, '0')}`;
  if (lower === 'tokenaddress') return '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
  if (/(address|depositor|recipient|sender)$/.test(lower) || lower === 'addresses') return `0x${String(n).padStart(2, '0')}${'12'.repeat(19)}`;
  if (lower.startsWith('token') || lower === 'symbol' || lower === 'refundedtoken' || lower === 'symbolsoraddresses') return lower === 'tokenout' ? 'USDT' : 'USDC';
  if (lower === '_id' || lower.endsWith('id') || lower === 'txuid') return `${lower.replace(/[^a-z]/g, '')}-${n}`;
  if (lower === 'addressnote') return 'customer 42';
  if (lower === 'reason') return 'OVER_MAX';
  if (lower === 'memoid') return '1234567890';
  if (lower === 'depositchains') return 'ARBITRUM';
  if (lower === 'market') return 'USDC/USDT';
  return `${name} text`;
}

function numberFor(name, ref, n) {
  if (ref === 'Int' || ref === 'NonNegativeInt') return 19000000 + n;
  const lower = name.toLowerCase();
  if (lower === 'estimatedduration') return 45000;
  if (lower === 'priority') return n;
  if (lower === 'ts' || lower === 'durationms') return 1767225600000 + n;
  if (lower === 'allowed' || lower === 'current' || lower.startsWith('total') || lower.startsWith('window')) return 10 + n;
  return 100.25 + n;
}

// `variant`: 'full' (every member) or 'minimal' (required members only, nullable ones null); `pick` chooses the
// member of every nested union (member `pick % size`), so that payloads 0..width-1 of a root write them all.
function value(node, name, variant, n, pick = 0) {
  switch (node.kind) {
    case 'literal':
      return BRAND[node.value] ?? node.value;
    case 'enum':
      return BRAND[node.values[n % node.values.length]] ?? node.values[n % node.values.length];
    case 'string':
      return stringFor(name, node.ref, n);
    case 'number':
      return numberFor(name, node.ref, n);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'union': {
      const nonNull = node.of.filter((m) => m.kind !== 'null');
      if (variant === 'minimal' && nonNull.length < node.of.length) return null;
      return value(nonNull[pick % nonNull.length], name, variant, n, pick);
    }
    case 'array': {
      // An array of a union gets one item per union member, so that every variant of a nested union is written.
      const items = node.items.kind === 'union' ? node.items.of : [node.items];
      return items.map((item, i) => value(item, name, variant, n + i, pick));
    }
    case 'tuple':
      return node.items.map((item, i) => value(item, name, variant, n + i, pick));
    case 'object': {
      const out = {};
      let i = 0;
      for (const p of node.props) {
        if (p.optional && variant === 'minimal') continue;
        out[p.name] = value(p.type, p.name, variant, n + i++, pick);
      }
      if (node.index && !node.props.length) {
        out.code = 'E_TIMEOUT';
        out.attempts = 2;
      }
      return out;
    }
    default:
      return null;
  }
}

// How many payloads it takes to write every member of every nested union once (arrays already write all members).
function width(node) {
  switch (node.kind) {
    case 'union': {
      const nonNull = node.of.filter((m) => m.kind !== 'null');
      return Math.max(nonNull.length, ...nonNull.map(width));
    }
    case 'object':
      // post-bridge data has fixtures of its own (one per tag); elsewhere its first variant stands for all.
      return Math.max(1, ...node.props.filter((p) => p.name !== 'postBridgeData' && p.name !== 'data').map((p) => width(p.type)));
    case 'array':
      return node.items.kind === 'union' ? Math.max(1, ...node.items.of.map(width)) : width(node.items);
    case 'tuple':
      return Math.max(1, ...node.items.map(width));
    default:
      return 1;
  }
}

// Each member of a union as its own root, with a name for the fixture file.
function variantsOf(node) {
  return node.kind === 'union' ? node.of : [node];
}

function label(node) {
  if (node.kind !== 'object') return node.kind;
  const lit = (k) => node.props.find((p) => p.name === k && p.type.kind === 'literal')?.type.value;
  const parts = [lit('_tag'), lit('type'), lit('state')].filter(Boolean).map((v) => BRAND[v] ?? v);
  // Shapes without a `type` or family tag (BRIDGE_CANCELLED, records of the optional-tag family) by their token members.
  if (!lit('type') && lit('_tag') !== 'bridgeSwap' && node.props.some((p) => p.name === 'tokenIn')) parts.push('swap');
  if (!lit('type') && !lit('_tag')?.match(/^(bridge|depositAddressBridge)$/) && node.props.some((p) => p.name === 'token' && !p.optional) && node.props.some((p) => p.name === 'usdPrice')) parts.push('single');
  return parts.join('.') || 'object';
}

// ---------------------------------------------------------------------------------------------- roots

function schema(env, name) {
  return env.prop(env.prop(env.get('components'), 'schemas'), name);
}
function response(env, op, status) {
  const o = env.prop(env.get('operations'), op);
  const r = env.prop(env.prop(o, 'responses'), String(status));
  return r && env.prop(env.prop(r, 'content'), 'application/json');
}

function main() {
  const api = path.join(SDK, 'dist', 'esm', 'api');
  const webhook = load(path.join(api, 'webhook', 'webhook-api-types.generated.d.ts'));
  const receiver = load(path.join(api, 'webhook', 'webhook-receiver-api-types.generated.d.ts'));
  const bridge = load(path.join(api, 'bridge', 'bridge-api-types.generated.d.ts'));
  const sda = load(path.join(api, 'sda', 'sda-api-types.generated.d.ts'));

  const fixtures = []; // {file, type, json}
  // each: one root per member of a top-level union; nested: one payload per member of every nested union.
  const add = (prefix, type, node, each = true, nested = true) => {
    for (const [i, v] of (each ? variantsOf(node) : [node]).entries()) {
      const w = nested ? width(v) : 1;
      for (let pick = 0; pick < w; pick++) {
        for (const variant of pick === 0 ? ['full', 'minimal'] : ['full']) {
          const json = value(v, '', variant, i, pick);
          const suffix = w > 1 && variant === 'full' ? `${variant}-${pick + 1}` : variant;
          const name = `${prefix}.${label(v)}.${suffix}.json`.replace(/\.+/g, '.');
          fixtures.push({ name, type, json });
        }
      }
    }
  };

  // Events: every member of the cursor page's item union, each of its variants.
  const page = walk(webhook, schema(webhook, 'WebhookUserEventsCursorResponse'));
  const items = page.props.find((p) => p.name === 'items').type.items;
  for (const kind of items.of) add('event', 'WebhookEvent', kind);
  add('page', 'UserEventsPage', page, false, false);
  add('envelope', 'WebhookEnvelope', walk(receiver, schema(receiver, 'WebhookEventPayload')), false, false);

  // Bridge records: every family and state of the history item union, and the status answer.
  const history = walk(bridge, response(bridge, 'history.userHistory', 200));
  const record = history.props.find((p) => p.name === 'items').type.items.props.find((p) => p.name === 'bridge').type;
  for (const r of record.of) add('record', 'BridgeRecord', r, false);
  add('history', 'HistoryPage', history, false, false);
  const status = walk(bridge, response(bridge, 'history.bridgeHistory', 200));
  const known = new Set(fixtures.map((f) => f.name));
  for (const r of variantsOf(status)) {
    const before = fixtures.length;
    add('record', 'BridgeRecord', r, false);
    // the status answer's union repeats the history's records: keep only new shapes
    fixtures.splice(before, fixtures.length - before, ...fixtures.slice(before).filter((f) => !known.has(f.name)));
  }

  // Post-bridge data: every tag once (as a quote request member would carry it).
  const pbd = walk(bridge, schema(bridge, 'ConnectedSingleBridgeQuoteResponseSchema')).props.find((p) => p.name === 'postBridgeData').type;
  add('post-bridge-data', 'PostBridgeData', pbd);

  // Quotes and commit.
  add('quote.user', 'QuoteResponse', walk(bridge, response(bridge, 'quote.userQuote', 200)));
  add('quote.bridge-swap', 'QuoteResponse', walk(bridge, response(bridge, 'quote.bridgeSwapUserQuote', 200)));
  add('commit', 'QuoteCommitted', walk(bridge, response(bridge, 'quote.commitQuote', 200)), false);

  // Deposit addresses.
  const created = walk(sda, response(sda, 'depositAddresses.createDepositAddress', 200));
  add('deposit-address', 'DepositAddress', created.items, false);
  add('search', 'DepositAddressSearchPage', walk(sda, response(sda, 'depositAddresses.searchDepositAddress', 200)), false);
  add('public-status', 'PublicDepositAddressStatus', walk(sda, response(sda, 'depositAddresses.publicDepositAddressStatus', 200)), false);

  // Error bodies of the spec's operations, each decoded into the component named by its `_tag`.
  const errorOps = [
    [bridge, ['quote.userQuote', 'quote.bridgeSwapUserQuote', 'quote.commitQuote', 'history.userHistory', 'history.bridgeHistory']],
    [sda, ['depositAddresses.createDepositAddress', 'depositAddresses.searchDepositAddress', 'depositAddresses.publicDepositAddressStatus']],
  ];
  const seenErrors = new Set();
  for (const [env, ops] of errorOps) {
    for (const op of ops) {
      for (const code of [400, 401, 403, 404, 422, 429]) {
        const t = response(env, op, code);
        if (!t) continue;
        for (const e of variantsOf(walk(env, t))) {
          const tag = e.props?.find((p) => p.name === '_tag')?.type.value;
          if (!tag || tag === 'HttpApiDecodeError' || seenErrors.has(tag)) continue;
          seenErrors.add(tag);
          add('error', tag, e, false);
        }
      }
    }
  }

  return fixtures;
}

const fixtures = main();
if (process.env.FIXTURES_STDOUT) {
  process.stdout.write(JSON.stringify(fixtures.map((f) => ({ name: f.name, type: f.type, json: f.json }))));
} else {
  fs.mkdirSync(OUT, { recursive: true });
  for (const old of fs.readdirSync(OUT)) if (old.endsWith('.json')) fs.unlinkSync(path.join(OUT, old));
  for (const f of fixtures) {
    fs.writeFileSync(path.join(OUT, f.name), JSON.stringify({ type: f.type, payload: f.json }, null, 2) + '\n');
  }
  console.error(`wrote ${fixtures.length} fixtures to ${OUT}`);
}
