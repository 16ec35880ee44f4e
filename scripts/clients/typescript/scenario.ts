// A TypeScript team's client of the service: openapi-fetch calls typed by the file openapi-typescript wrote from
// the document the server serves (`./api.d.ts`, written by run.mjs beside this file's copy), compiled with
// `tsc --strict` and run under node. Every answer is read through its generated type: the success bodies as
// `components["schemas"][...]` values narrowed by their tags and states (a member read exists only on the
// variant narrowed to, so a type that lost a variant or a member does not compile), the refusals as the error
// types openapi-fetch gives them. Runtime checks assert what the types promise: statuses, tags, states, members.
//
// Prints a JSON report on stdout: { calls: [{ name, operation, status, type }], kinds: [...], error }.
// Usage (run.mjs does this): node out/scenario.js <base-url> <project JWT>

import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

type Schemas = components["schemas"];

const [base, token] = process.argv.slice(2);
if (!base || !token) {
  console.error("usage: scenario.js <base-url> <project JWT>");
  process.exit(2);
}
const EVM_A = "0x1111111111111111111111111111111111111111";
const EVM_B = "0x2222222222222222222222222222222222222222";

const client = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });
const anonymous = createClient<paths>({ baseUrl: base });

interface Call {
  name: string;
  operation: string;
  status: number;
  type: string;
}
const calls: Call[] = [];

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

/** A 200 answer's body, typed by its operation. */
function ok<T>(name: string, operation: string, type: string, r: { data?: T; error?: unknown; response: Response }): T {
  calls.push({ name, operation, status: r.response.status, type });
  check(r.response.status === 200, `${name}: status ${r.response.status}: ${JSON.stringify(r.error)}`);
  check(r.data !== undefined, `${name}: no body`);
  return r.data;
}

/** A refusal's body, typed as the operation's error answers. */
function refused<E>(name: string, operation: string, type: string, status: number, r: { error?: E; response: Response }): E {
  calls.push({ name, operation, status: r.response.status, type });
  check(r.response.status === status, `${name}: status ${r.response.status}, expected ${status}`);
  check(r.error !== undefined, `${name}: no error body`);
  return r.error;
}

async function scenario(): Promise<string[]> {
  const quoted: Schemas["QuoteResponse"] = ok(
    "quote a bridge",
    "quoteBridge",
    "QuoteResponse",
    await client.POST("/bridge/quote/user", {
      body: { token: "USDC", chainIn: "ETHEREUM", chainOut: "BASE", amount: "100", mode: "pay", depositor: EVM_A, recipient: EVM_B },
    }),
  );
  check(quoted._tag === "bridge", `a bridge quote, not ${quoted._tag}`);
  const quote: Schemas["BridgeQuote"] = quoted;
  check(quote.token === "USDC" && typeof quote.fees.fee === "string", "the quote's token and fees");

  const swap = ok(
    "quote a bridge with a swap",
    "quoteBridgeSwap",
    "QuoteResponse",
    await client.POST("/bridge/quote/bridge-swap/user", {
      body: { tokenIn: "ETH", tokenOut: "USDC", chainIn: "ETHEREUM", chainOut: "BASE", amount: "0.05", mode: "pay", depositor: EVM_A, recipient: EVM_B },
    }),
  );
  check(swap._tag === "bridgeSwap", `a swap quote, not ${swap._tag}`);
  const swapQuote: Schemas["BridgeSwapQuote"] = swap;
  check(swapQuote.tokenIn === "ETH" && swapQuote.tokenOut === "USDC", "the swap quote's tokens");

  const committed: Schemas["QuoteCommitted"] = ok(
    "commit",
    "commitQuote",
    "QuoteCommitted",
    await client.POST("/bridge/quote/commit/{quoteId}", { params: { path: { quoteId: quote.quoteId } } }),
  );
  check(committed.quoteId === quote.quoteId, "the commit names the quote");

  const getBridge = async (bridgeId: string) =>
    client.GET("/bridge/history/bridge/{bridgeId}", { params: { path: { bridgeId } } });
  const pending: Schemas["BridgeRecord"] = ok("the bridge", "getBridge", "BridgeRecord", await getBridge(quote.quoteId));
  check(pending._tag === undefined || pending._tag === "bridge", `a single-token record, not ${pending._tag}`);
  check(pending.state === "PENDING" && pending._id === quote.quoteId, `PENDING, not ${pending.state}`);
  // The feed is read from the bridge's creation on (the sandbox's clock is not the wall clock).
  const started = Date.parse(pending.createdAt);

  const history: Schemas["HistoryPage"] = ok(
    "history",
    "listBridgeHistory",
    "HistoryPage",
    await client.GET("/bridge/history/user", { params: { query: { page: 1, limit: 10, sortBy: "createdAt", sortDirection: "desc" } } }),
  );
  check(history.items.some((item) => item.bridge._id === quote.quoteId), "the history lists the bridge");

  const deposited: Schemas["BridgeRecord"] = ok(
    "sandbox deposit",
    "sandboxDepositBridge",
    "BridgeRecord",
    await client.POST("/sandbox/bridges/{bridgeId}/deposit", { params: { path: { bridgeId: quote.quoteId } }, body: {} }),
  );
  check(deposited.state === "PENDING_CONFIRMATION", `PENDING_CONFIRMATION, not ${deposited.state}`);
  check(deposited.depositTxHash.length > 0, "the deposit's hash");

  let executed: Schemas["BridgeRecord"] = deposited;
  const deadline = Date.now() + 60_000;
  while (executed.state !== "EXECUTED" && Date.now() < deadline) {
    const clock: Schemas["SandboxClock"] = ok(
      "advance the sandbox clock",
      "sandboxAdvanceClock",
      "SandboxClock",
      await client.POST("/sandbox/clock/advance", { body: { ms: 300_000 } }),
    );
    check(typeof clock.now === "string", "the clock's time");
    await new Promise((r) => setTimeout(r, 300));
    executed = ok("the bridge, executed", "getBridge", "BridgeRecord", await getBridge(quote.quoteId));
  }
  check(executed.state === "EXECUTED", `EXECUTED, not ${executed.state}`);
  // Only the EXECUTED variant has withdrawTxHash: this compiles because the state narrowed the union.
  check(executed.withdrawTxHash.length > 0 && executed.depositTxHash === deposited.depositTxHash, "the payout's hash");

  const kinds = new Set<string>();
  let pageToken: string | undefined;
  do {
    const page: Schemas["UserEventsPage"] = ok(
      "event feed page",
      "listUserEvents",
      "UserEventsPage",
      await client.GET("/webhook/user-events-cursor", {
        params: { query: { sinceTimestamp: started, pageSize: 2, ...(pageToken ? { pageToken } : {}) } },
      }),
    );
    for (const event of page.items) {
      kinds.add(event._tag);
      if (event._tag === "BRIDGE_EXECUTED" && event.type === "bridge" && event._id === quote.quoteId) {
        // A mapped kind with several shapes, narrowed by `_tag` and then `type`.
        check(event.withdrawTxHash === executed.withdrawTxHash, "the executed event names the payout");
        kinds.add("BRIDGE_EXECUTED of this bridge");
      }
    }
    pageToken = page.nextPageToken ?? undefined;
  } while (pageToken);
  for (const kind of ["BRIDGE_PENDING", "BRIDGE_ACCEPTED", "BRIDGE_EXECUTED", "BRIDGE_EXECUTED of this bridge"]) {
    check(kinds.has(kind), `the feed has no ${kind}: ${[...kinds]}`);
  }

  const created: Schemas["DepositAddress"][] = ok(
    "create deposit addresses",
    "createDepositAddresses",
    "DepositAddress[]",
    await client.POST("/sda/deposit-addresses", {
      body: { depositChains: ["ETHEREUM", "ARBITRUM"], destinationChain: "BASE", destinationAddress: EVM_B, addressNote: "typescript client" },
    }),
  );
  check(created.length === 2 && created[0]?.depositChain === "ETHEREUM", "two addresses, in the order asked");
  const found: Schemas["DepositAddressSearchPage"] = ok(
    "search deposit addresses",
    "searchDepositAddresses",
    "DepositAddressSearchPage",
    await client.GET("/sda/deposit-addresses/search", { params: { query: { addressNote: "typescript client" } } }),
  );
  check(found.items.length === 2, `the search found ${found.items.length} addresses`);

  const decode = refused(
    "a 400: an amount that is no decimal",
    "quoteBridge",
    "BadRequest",
    400,
    await client.POST("/bridge/quote/user", {
      body: { token: "USDC", chainIn: "ETHEREUM", chainOut: "BASE", amount: "a lot", mode: "pay", depositor: EVM_A, recipient: EVM_B },
    }),
  );
  check("_tag" in decode && decode._tag === "HttpApiDecodeError", `HttpApiDecodeError: ${JSON.stringify(decode)}`);
  check(decode.issues.length > 0, "the decode error lists its issues");

  const unauthorized = refused(
    "a 401: no credentials",
    "listBridgeHistory",
    "Unauthorized",
    401,
    await anonymous.GET("/bridge/history/user", { params: { query: { page: 1, limit: 10, sortBy: "createdAt", sortDirection: "desc" } } }),
  );
  check("_tag" in unauthorized && unauthorized._tag === "Unauthorized", `Unauthorized: ${JSON.stringify(unauthorized)}`);

  const unknown = refused("a 422: a bridge that does not exist", "getBridge", "InvalidRequest", 422, await getBridge("no-such-bridge"));
  check("_tag" in unknown && unknown._tag === "InvalidRequest", `InvalidRequest: ${JSON.stringify(unknown)}`);
  return [...kinds];
}

try {
  const kinds = await scenario();
  process.stdout.write(JSON.stringify({ calls, kinds, error: null }));
} catch (e) {
  process.stdout.write(JSON.stringify({ calls, error: String(e instanceof Error ? e.stack : e) }));
  process.exitCode = 1;
}
