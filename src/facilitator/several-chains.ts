/**
 * One facilitator on several chains (issue 67 item 6): a facilitator per chain (its RPC, its settling key, its
 * allow-list, keys' gas counted on its chain), all on one database (their ledgers are keyed by network), behind
 * one front. A payment goes to the chain its requirements name; `/supported` lists every chain's kinds and
 * signers; the Bazaar, the keys and the health checks are the database's, so the first chain's answer them.
 * Over HTTP a `/verify` or `/settle` is handed to its chain's own routes whole (the same access checks, the
 * same answers), so the front adds nothing a chain would judge differently.
 */
import type { SupportedResponse } from "@x402/core/types";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorBody } from "../common/errors.ts";
import type { Gate } from "./access/index.ts";
import type { ChannelAuthorizers } from "./channels/authorizers.ts";
import type { Facilitator } from "./facilitator.ts";
import { MAX_BODY_BYTES } from "./http.ts";
import { caip2Of } from "./v1.ts";

/** The facilitators of several chains as one; with a single one, that one. */
export function facilitatorOfChains(list: readonly Facilitator[]): Facilitator {
  const [first] = list;
  if (!first) throw new Error("a facilitator settles on one chain at least");
  if (list.length === 1) return first;
  const byNetwork = new Map(list.map((f) => [f.network as string, f]));
  // A network no chain settles goes to the first, whose refusal says which it settles. A v1 request names
  // its network by v1's name (`polygon`): the chain of that id takes it.
  const of = (requirements: { network?: unknown } | undefined) =>
    byNetwork.get(caip2Of(String(requirements?.network))) ?? first;
  const supported = () => mergeSupported(list.map((f) => f.supported()));
  const service: Omit<Facilitator, "app"> = {
    network: first.network,
    address: first.address,
    scope: first.scope,
    verify: (payload, requirements) => of(requirements).verify(payload, requirements),
    settle: (payload, requirements, grant, origin) =>
      of(requirements).settle(payload, requirements, grant, origin),
    supported,
    gate: allGates(list.map((f) => f.gate)),
    channelAuthorizers: allAuthorizers(list.map((f) => f.channelAuthorizers)),
    discoveryResources: (query) => first.discoveryResources(query),
    resolvePending: async () => {
      const all = await Promise.all(list.map((f) => f.resolvePending()));
      return {
        checked: all.reduce((n, s) => n + s.checked, 0),
        resolved: all.reduce((n, s) => n + s.resolved, 0),
      };
    },
    settlementsWaiting: () => list.reduce((n, f) => n + f.settlementsWaiting(), 0),
    untilSettlementsWaiting: (n) => first.untilSettlementsWaiting(n),
    ping: () => first.ping(),
    close: async () => {
      await Promise.all(list.map((f) => f.close()));
    },
  };
  return { ...service, app: frontRoutes(first, of, supported) };
}

/** `/verify` and `/settle` to the chain the body's requirements name; `/supported` merged; the rest the first's. */
function frontRoutes(
  first: Facilitator,
  of: (requirements: { network?: unknown } | undefined) => Facilitator,
  supported: () => SupportedResponse,
): Hono {
  const app = new Hono();
  const handOn = async (c: Context) => {
    const body = await c.req.text();
    let requirements: { network?: unknown } | undefined;
    try {
      requirements = (JSON.parse(body) as { paymentRequirements?: { network?: unknown } })
        ?.paymentRequirements;
    } catch {
      // Not JSON: the first chain's routes refuse it in their own words.
    }
    const request = new Request(c.req.url, { method: "POST", headers: c.req.raw.headers, body });
    // The node's socket goes along: a chain's gate tells loopback callers apart by it.
    return of(requirements).app.fetch(request, c.env);
  };
  // Read whole here before a chain's routes see it: held to their limit first.
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json(errorBody("payload_too_large", `the body exceeds ${MAX_BODY_BYTES} bytes`), 413),
  });
  app.post("/verify", limit, handOn);
  app.post("/settle", limit, handOn);
  app.get("/supported", (c) => c.json(supported()));
  app.all("*", (c) => first.app.fetch(c.req.raw, c.env));
  return app;
}

/** Every chain's kinds, extensions and signers in one answer, as a facilitator of them all would give. */
export function mergeSupported(answers: readonly SupportedResponse[]): SupportedResponse {
  const signers: Record<string, string[]> = {};
  for (const answer of answers)
    for (const [family, list] of Object.entries(answer.signers ?? {}))
      signers[family] = [...new Set([...(signers[family] ?? []), ...list])];
  return {
    kinds: answers.flatMap((a) => a.kinds),
    extensions: [...new Set(answers.flatMap((a) => a.extensions ?? []))],
    signers,
  };
}

/**
 * The chains' gates as one, for what the process does with them: payees it serves in process are allowed on
 * every chain. A chain's own admission stays its gate's (its routes ask it).
 */
function allGates(gates: readonly Gate[]): Gate {
  const [first] = gates as [Gate];
  return {
    open: first.open,
    allows: (payee) => gates.some((g) => g.allows(payee)),
    allow: (payees) => {
      const list = [...payees];
      for (const gate of gates) gate.allow(list);
    },
    get payees() {
      return Math.max(...gates.map((g) => g.payees));
    },
    admit: (...args) => first.admit(...args),
  };
}

/** A receiver's own channel authorizers, told to every chain's facilitator. */
function allAuthorizers(list: readonly ChannelAuthorizers[]): ChannelAuthorizers {
  const [first] = list as [ChannelAuthorizers];
  return {
    ...first,
    register: (receiver, authorizers) => {
      const given = [...authorizers];
      for (const each of list) each.register(receiver, given);
    },
  };
}
