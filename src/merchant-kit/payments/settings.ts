/**
 * How the merchant hosts are paid (the configuration's `payments`): the network and token of the `exact`
 * scheme, the facilitators they verify and settle through, and the chain where a payer's balance is read.
 */
import { z } from "zod";
import { BASE_CAIP2 } from "../../chain/base.ts";
import { BASE_RECORD, chains } from "../../chain/chains.ts";
import { ConfigError } from "../../config/config-error.ts";
import { DEFAULT_FACILITATOR_URL, DEFAULT_PORTS } from "../../config/ports.ts";
import { BaseUrl, chainRpcVariable, type Env } from "../../config/values.ts";
import { COINBASE_FACILITATOR_URL, cdpKeySecret, parseHeaderLines } from "./facilitators/auth.ts";

const Caip2 = z.string().regex(/^eip155:\d+$/, "a CAIP-2 EVM network such as eip155:8453");

const Asset = z.object({
  address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "a token address"),
  /** EIP-712 domain name and version of the token: a wrong name breaks every signature. */
  name: z.string().min(1),
  version: z.string().min(1),
  decimals: z.coerce.number().int().min(0).max(36),
});

const Rpc = z.url({ protocol: /^https?$/ });

export const PaymentsSchema = z.object({
  /** CAIP-2 network of the first way to pay, the host's own; Base is `eip155:8453` (the devnet is Base too). */
  network: Caip2,
  asset: Asset,
  /** The facilitator's base URL (verify, settle, supported). */
  facilitatorUrl: BaseUrl,
  /**
   * The facilitators the merchant hosts verify and settle through, in the order they are tried when one
   * is down or refuses (src/merchant-kit/payments/facilitators/failover.ts; docs/platform.md, "Facilitators"):
   * X402M_FACILITATOR_URL's (the same as `facilitatorUrl`), then X402M_FACILITATOR_2_URL .. _9_URL. Each
   * sends its static headers (X402M_FACILITATOR[_n]_HEADERS: `Name: value` lines separated by `\n`)
   * and, with `auth: "cdp"` (X402M_FACILITATOR[_n]_AUTH=cdp, the default for Coinbase's URL), a JWT
   * signed with `cdp` per request. Headers may hold keys: never printed.
   */
  facilitators: z
    .array(
      z.object({
        url: BaseUrl,
        headers: z.string().transform((text, ctx) => {
          try {
            return parseHeaderLines(text);
          } catch (error) {
            ctx.addIssue({ code: "custom", message: (error as Error).message });
            return z.NEVER;
          }
        }),
        auth: z.enum(["none", "cdp"], { error: '"cdp" (a JWT signed with CDP_API_KEY_*) or "none"' }),
      }),
    )
    .min(1),
  /** The Coinbase CDP API key (CDP_API_KEY_ID, CDP_API_KEY_SECRET) the `cdp` facilitators sign with; never printed. */
  cdp: z
    .object({
      apiKeyId: z.string().min(1, "CDP_API_KEY_ID is required with CDP_API_KEY_SECRET"),
      apiKeySecret: z
        .string()
        .min(1, "CDP_API_KEY_SECRET is required with CDP_API_KEY_ID")
        .transform((secret, ctx) => {
          try {
            return cdpKeySecret(secret);
          } catch (error) {
            ctx.addIssue({ code: "custom", message: (error as Error).message });
            return z.NEVER;
          }
        }),
    })
    .nullable(),
  /**
   * JSON-RPC of the payments' chain, where merchants read a payer's balance before work that writes or
   * costs upstream (src/merchant-kit/payments/ledger/payment-ledger.ts).
   */
  rpcUrl: Rpc,
  /**
   * Every network the hosts take payment on, the first being `network` with `asset` and `rpcUrl` (issue 67):
   * X402M_NETWORK as a comma-separated list, each further one a chain with a record (its USDC) and its
   * JSON-RPC in X402M_RPC_URL_<SLUG>. One price in dollars for all, so their tokens' decimals agree.
   */
  /**
   * Solana's JSON-RPC (X402M_SOLANA_RPC_URL; issue 86): with it, a host whose X402M_<HOST>_SOLANA_PAY_TO is set
   * offers `exact` on Solana (USDC) beside its EVM ways, and the facilitator with X402M_FACILITATOR_SOLANA_KEY
   * settles there. Null: no Solana.
   */
  solanaRpcUrl: Rpc.nullable(),
  networks: z
    .array(z.object({ network: Caip2, asset: Asset, rpcUrl: Rpc }))
    .min(1)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      for (const entry of list) {
        if (seen.has(entry.network))
          ctx.addIssue({ code: "custom", message: `${entry.network} is listed twice` });
        seen.add(entry.network);
        if (entry.asset.decimals !== list[0]?.asset.decimals)
          ctx.addIssue({
            code: "custom",
            message: `the token on ${entry.network} has ${entry.asset.decimals} decimals, the first network's ${list[0]?.asset.decimals}: one price must mean one amount on each`,
          });
      }
    }),
});

/** The payment settings' raw values, from the environment. */
export function readPayments(env: Env) {
  const facilitators = facilitatorsOf(env);
  const [network = BASE_CAIP2, ...more] = (env.X402M_NETWORK ?? BASE_CAIP2)
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  // The token defaults to the network's USDC where a chain record knows it (Polygon's native USDC on
  // eip155:137), so that naming the network is enough; Base's elsewhere, as before.
  const usdc = (chains.byCaip2.get(network) ?? BASE_RECORD).usdc;
  const asset = {
    address: env.X402M_ASSET ?? usdc.address,
    name: env.X402M_ASSET_NAME ?? usdc.name,
    version: env.X402M_ASSET_VERSION ?? usdc.version,
    decimals: env.X402M_ASSET_DECIMALS ?? String(usdc.decimals),
  };
  // Its chain's own variable, the one `serve` follows it by, before the devnet's.
  const record = chains.byCaip2.get(network);
  const rpcUrl =
    env.X402M_RPC_URL ??
    (record && env[chainRpcVariable(record.slug)]) ??
    `http://127.0.0.1:${DEFAULT_PORTS.devnet}`;
  return {
    network,
    asset,
    networks: [{ network, asset, rpcUrl }, ...more.map((n) => furtherNetwork(env, n))],
    facilitatorUrl: facilitators[0]?.url,
    facilitators,
    cdp:
      env.CDP_API_KEY_ID || env.CDP_API_KEY_SECRET
        ? { apiKeyId: env.CDP_API_KEY_ID ?? "", apiKeySecret: env.CDP_API_KEY_SECRET ?? "" }
        : null,
    rpcUrl,
    solanaRpcUrl: env.X402M_SOLANA_RPC_URL || null,
  };
}

/**
 * A network after the first in X402M_NETWORK: a chain of src/chain/chains.ts, whose USDC it takes (X402M_ASSET
 * is the first's), read and claimed on at its own RPC.
 */
function furtherNetwork(env: Env, network: string) {
  const record = chains.byCaip2.get(network);
  if (!record)
    throw new ConfigError(
      `invalid X402M_NETWORK: ${network} after the first needs a chain record (its USDC): one of ${chains.list.map((c) => c.caip2).join(", ")}`,
    );
  const variable = chainRpcVariable(record.slug);
  const rpcUrl = env[variable];
  if (!rpcUrl)
    throw new ConfigError(
      `X402M_NETWORK names ${network}: set ${variable}, its JSON-RPC (payers' balances are read there)`,
    );
  const { usdc } = record;
  return {
    network,
    asset: { address: usdc.address, name: usdc.name, version: usdc.version, decimals: String(usdc.decimals) },
    rpcUrl,
    solanaRpcUrl: env.X402M_SOLANA_RPC_URL || null,
  };
}

/** The environment variable behind a path in `payments` (the path within it). */
export function paymentsSetting([field, index, part]: readonly string[]): string | undefined {
  switch (field) {
    case "facilitators":
      return `${facilitatorEnvPrefix(Number(index ?? 0) + 1)}${(part ?? "url").toUpperCase()}`;
    case "cdp":
      return index === "apiKeyId" ? "CDP_API_KEY_ID" : "CDP_API_KEY_SECRET";
    case "network":
    case "networks":
      return "X402M_NETWORK";
    case "facilitatorUrl":
      return "X402M_FACILITATOR_URL";
    case "rpcUrl":
      return "X402M_RPC_URL";
    case "solanaRpcUrl":
      return "X402M_SOLANA_RPC_URL";
    case "asset":
      return `X402M_ASSET${index && index !== "address" ? `_${index.toUpperCase()}` : ""}`;
    default:
      return undefined;
  }
}

/** The most facilitators the merchants try in turn (X402M_FACILITATOR_URL, then _2_ .. _9_). */
export const MAX_FACILITATORS = 9;

/** The prefix of the n-th facilitator's settings (from 1): `X402M_FACILITATOR_`, `X402M_FACILITATOR_2_`... */
export function facilitatorEnvPrefix(n: number): string {
  return n === 1 ? "X402M_FACILITATOR_" : `X402M_FACILITATOR_${n}_`;
}

/**
 * The facilitators' raw settings, in order. The first's URL defaults to Coinbase's when a CDP key is set,
 * else to the devnet's; its auth to `cdp` for Coinbase's host. Numbered ones follow without gaps.
 */
function facilitatorsOf(env: Env) {
  const list = [];
  for (let n = 1; n <= MAX_FACILITATORS; n++) {
    const prefix = facilitatorEnvPrefix(n);
    const url =
      n === 1
        ? (env.X402M_FACILITATOR_URL ??
          (env.CDP_API_KEY_ID ? COINBASE_FACILITATOR_URL : DEFAULT_FACILITATOR_URL))
        : env[`${prefix}URL`];
    if (!url) {
      const later = Array.from({ length: MAX_FACILITATORS - n + 1 }, (_, i) => facilitatorEnvPrefix(n + i));
      const stray = later
        .flatMap((p) => ["URL", "HEADERS", "AUTH"].map((f) => `${p}${f}`))
        .find((k) => env[k]);
      if (stray)
        throw new ConfigError(
          `invalid ${stray}: set ${prefix}URL first (facilitators are numbered 2, 3, ... in order)`,
        );
      break;
    }
    const auth = env[`${prefix}AUTH`] || (/^https:\/\/api\.cdp\.coinbase\.com\//.test(url) ? "cdp" : "none");
    if (auth === "cdp" && !env.CDP_API_KEY_ID && !env.CDP_API_KEY_SECRET)
      throw new ConfigError(
        `invalid ${prefix}${env[`${prefix}AUTH`] ? "AUTH" : "URL"}: ${url} signs its requests with a CDP API key: set CDP_API_KEY_ID and CDP_API_KEY_SECRET${env[`${prefix}AUTH`] ? "" : ` (or ${prefix}AUTH=none)`}`,
      );
    list.push({ url, headers: env[`${prefix}HEADERS`] ?? "", auth });
  }
  return list;
}
