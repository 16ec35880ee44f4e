// The TypeScript client of scenario.ts (openapi-fetch calls typed by openapi-typescript's types) against a project
// whose fault profile answers a share of its requests 429 TooManyRequests and 503 ServiceUnavailable on purpose
// (`PUT /sandbox/faults`, or `serve --faults`).
//
// openapi-fetch does not retry: a 429 or a 503 is the caller's answer. What it needs is the few lines of
// `retrying` below, a `fetch` handed to `createClient` that sends a request again after a 429 (waiting its
// `Retry-After`) or a 503 whose body is the contract's `ServiceUnavailable` (nothing was changed, so even a commit
// may be sent again). openapi-fetch hands `fetch` a `Request`, whose body can be read once: each attempt sends a
// clone.
//
// Runs the scenario (quote, commit, the history, three rounds) with it, then once more without it, which must stop
// at a fault. Prints a JSON report on stdout: { calls, faults: { kind: count }, retries, withoutRetries, error }.
// Usage (run.mjs does this, with SCENARIO=faults): node out/faults.js <base-url> <project JWT>

import createClient from "openapi-fetch";
import type { paths } from "./api.js";

const [base, token] = process.argv.slice(2);
if (!base || !token) {
  console.error("usage: faults.js <base-url> <project JWT>");
  process.exit(2);
}
const EVM_A = "0x1111111111111111111111111111111111111111";
const EVM_B = "0x2222222222222222222222222222222222222222";

/** Every attempt's `x-sandbox-fault` (null: not faulted). */
const seen: (string | null)[] = [];

/** `fetch`, sending a request again (up to `attempts` in all) after a 429 or the contract's 503. */
function retrying(attempts = 6): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(request.clone());
      seen.push(response.headers.get("x-sandbox-fault"));
      if (attempt === attempts || (response.status !== 429 && response.status !== 503)) return response;
      if (response.status === 503) {
        const body: unknown = await response.clone().json().catch(() => null);
        const tag = typeof body === "object" && body !== null && "_tag" in body ? body._tag : null;
        if (tag !== "ServiceUnavailable") return response; // a gateway's 503: the request may have been carried out
      }
      const wait = response.status === 429 ? Number(response.headers.get("retry-after") ?? "1") * 1000 : 200;
      await new Promise((r) => setTimeout(r, wait));
    }
  };
}

interface Call {
  name: string;
  operation: string;
  status: number;
}
const calls: Call[] = [];

class Refused extends Error {
  constructor(name: string, readonly status: number, readonly fault: string | null) {
    super(`${name}: ${status} (x-sandbox-fault: ${fault})`);
  }
}

/** A 200 answer's body, or the refusal that stops the scenario. */
function ok<T>(name: string, operation: string, r: { data?: T; response: Response }): T {
  calls.push({ name, operation, status: r.response.status });
  if (r.response.status !== 200 || r.data === undefined) {
    throw new Refused(name, r.response.status, r.response.headers.get("x-sandbox-fault"));
  }
  return r.data;
}

/** Three rounds of quote, commit and the history; `before`: the bridges the project already has. */
async function scenario(client: ReturnType<typeof createClient<paths>>, before: number): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const quoted = ok(
      "quote",
      "quoteBridge",
      await client.POST("/bridge/quote/user", {
        body: { token: "USDC", chainIn: "ETHEREUM", chainOut: "BASE", amount: "100", mode: "pay", depositor: EVM_A, recipient: EVM_B },
      }),
    );
    if (quoted._tag !== "bridge") throw new Error(`a bridge quote, not ${quoted._tag}`);
    ok("commit", "commitQuote", await client.POST("/bridge/quote/commit/{quoteId}", { params: { path: { quoteId: quoted.quoteId } } }));
    const history = ok(
      "history",
      "listBridgeHistory",
      await client.GET("/bridge/history/user", { params: { query: { page: 1, limit: 10, sortBy: "createdAt", sortDirection: "desc" } } }),
    );
    if (history.items.length !== before + round + 1) throw new Error(`round ${round}: the history lists ${history.items.length}`);
  }
}

const headers = { Authorization: `Bearer ${token}` };
const report: Record<string, unknown> = { calls, error: null };
try {
  const started = Date.now();
  await scenario(createClient<paths>({ baseUrl: base, headers, fetch: retrying() }), 0);
  report.seconds = (Date.now() - started) / 1000;
  const faults: Record<string, number> = {};
  for (const fault of seen) if (fault) faults[fault] = (faults[fault] ?? 0) + 1;
  report.faults = faults;
  report.retries = seen.length - calls.length;
  try {
    await scenario(createClient<paths>({ baseUrl: base, headers }), 3);
    report.withoutRetries = null;
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    report.withoutRetries = { status: e.status, fault: e.fault };
  }
} catch (e) {
  report.error = String((e as Error)?.stack ?? e);
}
process.stdout.write(JSON.stringify(report));
process.exitCode = report.error ? 1 : 0;
