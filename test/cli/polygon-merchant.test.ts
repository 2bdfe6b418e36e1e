/**
 * A merchant paid on Polygon PoS through the project's facilitator (issue 67): a devnet as chain 137 (Polygon's
 * native USDC and x402's contracts at their addresses), `facilitator --rpc` on it (its USDC known from the chain's
 * record), and `serve --only utility` and `--only inference` told only `X402M_NETWORK=eip155:137` (the token
 * follows). The SDK's own clients pay: `exact` by EIP-3009, a payment channel by deposit and vouchers (refunded at
 * the end), and `upto` through x402's upto proxy. The facilitator's Bazaar lists the route on Polygon. `index
 * --chain polygon` then `report --chain polygon` count exactly what was paid, under Polygon and in no Base report.
 *
 * Then one host paid on Base and Polygon at once (`X402M_NETWORK=eip155:8453,eip155:137`, issue 67 item 6):
 * its 402 lists each network with its USDC, a buyer's SDK client pays on whichever network it holds a key
 * for, each through the facilitator of that chain, and each payment lands in its own chain's report.
 */
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { ExactEvmScheme as ExactClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { BASE_RECORD, POLYGON_RECORD } from "../../src/chain/chains.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { runMain, serveInProcess } from "../helpers/in-process.ts";
import { startTestDevnet } from "../helpers/indexer.ts";
import { startCli } from "../helpers/process.ts";
import { newMerchant, usdcReader } from "../helpers/x402.ts";

const NETWORK = POLYGON_RECORD.caip2 as `${string}:${string}`;
/** `/api/store`'s price ($0.001), the calls paid each way (a whole cent in all: a report's dollars have two decimals), and the channel's deposit. */
const PRICE = 1_000n;
const EXACT_CALLS = 5;
const CHANNEL_CALLS = 5;
const DEPOSIT = 20_000n;

let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
/** Base's chain, for the host on both networks: started beside Polygon's rather than after it, in its test. */
let baseDevnet: Devnet;
let baseMiner: ReturnType<typeof startMiner>;

beforeAll(async () => {
  [devnet, baseDevnet] = await Promise.all([
    startTestDevnet({ chain: POLYGON_RECORD, buyers: 2, genesisNumber: 0 }),
    startTestDevnet({ buyers: 1 }),
  ]);
  miner = startMiner(devnet);
  baseMiner = startMiner(baseDevnet);
}, 60_000);
afterAll(async () => {
  await Promise.all([miner?.stop(), baseMiner?.stop()]);
  await Promise.all([devnet?.stop(), baseDevnet?.stop()]);
});

/**
 * `facilitator --rpc` on `chain`'s devnet, as docs/cli.md tells a new user, with its own PGlite; stopped when
 * the test ends (the tests take turns with the Polygon devnet's one facilitator signer).
 */
async function startFacilitator(
  chain: Devnet,
  env: Record<string, string> = {},
): Promise<{ facilitator: string; network: string; assets: string[]; chains?: unknown[] }> {
  const state = await isolatedDatabaseOptions("pglite");
  onTestFinished(state.cleanup);
  const run = startCli(["facilitator", "--rpc", chain.rpc, "--port", "0", "--data", state.dataDir], {
    DATABASE_URL: "",
    X402M_FACILITATOR_KEY: chain.facilitatorAccount.privateKey,
    // The miner mines within 20 ms of a send: asked every 500 ms (the default), each settlement would wait
    // most of that for nothing, about 20 times in the file.
    X402M_FACILITATOR_POLL_MS: "20",
    ...env,
  });
  return JSON.parse(await run.line);
}

/** `CHANNEL_CALLS` calls of `url` through a Polygon channel of the SDK's client, opened by a `DEPOSIT`. */
async function payByChannel(account: ReturnType<typeof privateKeyToAccount>, url: string) {
  const channel = new BatchClient(account, { rpcUrl: devnet.rpc, depositStrategy: () => DEPOSIT.toString() });
  const viaChannel = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, channel));
  for (let i = 0; i < CHANNEL_CALLS; i++) {
    const answer = await viaChannel(url);
    expect(answer.status, await answer.clone().text()).toBe(200);
  }
  return channel;
}

describe("a merchant on Polygon", () => {
  it("is paid by the SDK's exact, upto and channel clients through the project's facilitator, and reported under Polygon only", async () => {
    const payTo = newMerchant();
    const authorizerKey = generatePrivateKey();
    const settling = await startFacilitator(devnet, {
      X402M_FACILITATOR_CHANNEL_AUTHORIZERS: `${payTo}=${privateKeyToAccount(authorizerKey).address}`,
    });
    expect(settling).toMatchObject({ network: NETWORK, assets: [getAddress(POLYGON_RECORD.usdc.address)] });

    // What a merchant host on Polygon is told: the network (its USDC follows), its RPC, the facilitator.
    const onPolygon = {
      DATABASE_URL: "",
      X402M_NETWORK: NETWORK,
      X402M_FACILITATOR_URL: settling.facilitator,
      X402M_RPC_URL: devnet.rpc,
      PORT: "0",
    };
    // Both hosts the merchant sells from, in one process (a second would start PGlite and the bundle again).
    const merchantState = await isolatedDatabaseOptions("pglite");
    onTestFinished(merchantState.cleanup);
    const serve = startCli(["serve", "--only", "utility,inference", "--data", merchantState.dataDir], {
      ...onPolygon,
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: authorizerKey,
      X402M_UTILITY_PORT: "0",
      X402M_INFERENCE_PAY_TO: payTo,
      X402M_INFERENCE_ENGINE: "offline",
      X402M_INFERENCE_PORT: "0",
    });
    const hosts = JSON.parse(await serve.line) as { utility: string; inference: string };
    const url = `${hosts.utility}/api/store`;

    // The 402 names Polygon and its USDC's EIP-712 domain, for exact and for the channel.
    const required = decodePaymentRequiredHeader(
      (await fetch(url)).headers.get("payment-required") as string,
    );
    // Every option it offers is paid below.
    expect(required.accepts.map((a) => [a.scheme, a.network, a.asset.toLowerCase()])).toEqual([
      ["exact", NETWORK, POLYGON_RECORD.usdc.address],
      ["batch-settlement", NETWORK, POLYGON_RECORD.usdc.address],
    ]);
    expect(required.accepts.find((a) => a.scheme === "exact")?.extra).toMatchObject({
      name: "USD Coin",
      version: "2",
    });

    const account = privateKeyToAccount((devnet.buyers[0] as DevnetAccount).privateKey);
    const usdc = usdcReader(devnet.rpc, POLYGON_RECORD.usdc.address);
    const before = await usdc.balanceOf(account.address);
    const exact = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new ExactClient(account)));
    for (let i = 0; i < EXACT_CALLS; i++) {
      const answer = await exact(url);
      expect(answer.status, await answer.clone().text()).toBe(200);
    }
    const channel = await payByChannel(account, url);
    expect(await channel.refund(url)).toMatchObject({ success: true });

    // upto, through x402's upto proxy on Polygon: the inference API's metered tier route, on its offline engine,
    // the same wallet paid (a merchant both hosts pay).
    const chat = `${hosts.inference}/v1/chat/completions/_t/t3/upto`;
    const upto = wrapFetchWithPayment(fetch, new x402Client().register(NETWORK, new UptoClient(account)));
    const metered = await upto(chat, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Hello from Polygon." }], max_tokens: 16 }),
    });
    expect(metered.status, await metered.clone().text()).toBe(200);
    const taken = BigInt(
      decodePaymentResponseHeader(metered.headers.get("payment-response") as string).amount ?? 0,
    );
    expect(taken).toBeGreaterThan(0n);
    const paid = PRICE * BigInt(EXACT_CALLS + CHANNEL_CALLS) + taken;
    expect(await usdc.balanceOf(account.address)).toBe(before - paid);

    // The facilitator's Bazaar lists what it settled, on Polygon.
    const listed = (await (await fetch(`${settling.facilitator}/discovery/resources`)).json()) as {
      items: { resource: string; accepts: { network: string }[] }[];
    };
    const store = listed.items.find((item) => item.resource.includes("/api/store"));
    expect(store?.accepts.map((a) => a.network)).toContain(NETWORK);

    // Indexed as Polygon's, and reported there: exactly what was paid, each way.
    const head = Number(await usdc.client.getBlockNumber());
    const analytics = await isolatedDatabaseOptions("pglite");
    onTestFinished(analytics.cleanup);
    const indexed = await runMain([
      "index",
      "--rpc",
      devnet.rpc,
      "--chain",
      "polygon",
      "--facilitator",
      devnet.facilitatorAccount.address,
      "--to-block",
      String(head),
      "--data",
      analytics.dataDir,
    ]);
    expect(indexed.code, indexed.stderr).toBe(0);
    const report = await runMain(["report", payTo, "--chain", "polygon", "--data", analytics.dataDir]);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({
      chain: "polygon",
      address: payTo.toLowerCase(),
      usd: Math.round(Number(paid) / 1e4) / 100,
      // Each exact call a payment; the channel's five charges one, its claim at the refund; the upto one.
      tx: EXACT_CALLS + 2,
      window: { end_block: head },
    });
    // The chain's week is its young life here: a few seconds of blocks.
    expect(JSON.parse(report.stdout).claim).toMatch(/ from 1 of 1 buyer wallets on Polygon in the /);
    // No Base data at all: Base's report has nothing to say.
    const base = await runMain(["report", payTo, "--data", analytics.dataDir]);
    expect(base.code).not.toBe(0);
    expect(base.stderr).toMatch(/no Base data/);
  }, 120_000);

  it("takes payment on Base and Polygon in one host through one facilitator process on both: its 402 lists both, each payment settled on its own chain by its own key and reported there", async () => {
    const base = baseDevnet;
    // The host signs its channels' claims with its own key, which Base's facilitator is told of.
    const payTo = newMerchant();
    const authorizerKey = generatePrivateKey();
    // One facilitator process on both chains (`--rpc` Base's, X402M_RPC_URL_POLYGON Polygon's), settling on
    // Polygon with a key of its own there (a funded devnet account that is not the facilitator's).
    const polygonSigner = devnet.buyers[0] as DevnetAccount;
    const facilitator = await startFacilitator(base, {
      X402M_RPC_URL_POLYGON: devnet.rpc,
      X402M_FACILITATOR_KEY_POLYGON: polygonSigner.privateKey,
      X402M_FACILITATOR_CHANNEL_AUTHORIZERS: `${payTo}=${privateKeyToAccount(authorizerKey).address}`,
    });
    expect(facilitator).toMatchObject({
      network: BASE_RECORD.caip2,
      chains: [
        { network: BASE_RECORD.caip2, signer: base.facilitatorAccount.address },
        {
          network: NETWORK,
          signer: polygonSigner.address,
          assets: [getAddress(POLYGON_RECORD.usdc.address)],
        },
      ],
    });
    const supported = (await (await fetch(`${facilitator.facilitator}/supported`)).json()) as {
      kinds: { scheme: string; network: string }[];
    };
    // Each chain by its CAIP-2 id, and by its x402 v1 name for v1's exact scheme.
    expect(new Set(supported.kinds.map((k) => k.network))).toEqual(
      new Set([BASE_RECORD.caip2, NETWORK, "base", "polygon"]),
    );

    // One host, two networks: the first is Base (X402M_RPC_URL), Polygon's RPC its chain's own variable, one
    // facilitator URL for both (a payment goes to the chain its requirements name).
    // Started in this process as `serve` starts it, from the same variables: what is checked is what the host
    // offers and settles, which the first test has already seen of a `serve` process on Polygon.
    const state = await isolatedDatabaseOptions("pglite");
    onTestFinished(state.cleanup);
    const served = await serveInProcess("utility", state.dataDir, {
      DATABASE_URL: "",
      X402M_NETWORK: `${BASE_RECORD.caip2},${NETWORK}`,
      X402M_RPC_URL: base.rpc,
      X402M_RPC_URL_POLYGON: devnet.rpc,
      X402M_FACILITATOR_URL: facilitator.facilitator,
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: authorizerKey,
      X402M_UTILITY_PORT: "0",
      PORT: "0",
    });
    const host = served.urls.utility as string;
    const url = `${host}/api/store`;

    // Base's ways first, then Polygon's, each with its USDC: exact, and a payment channel on each chain.
    const required = decodePaymentRequiredHeader(
      (await fetch(url)).headers.get("payment-required") as string,
    );
    expect(required.accepts.map((a) => [a.scheme, a.network, a.asset.toLowerCase()])).toEqual([
      ["exact", BASE_RECORD.caip2, BASE_RECORD.usdc.address.toLowerCase()],
      ["batch-settlement", BASE_RECORD.caip2, BASE_RECORD.usdc.address.toLowerCase()],
      ["exact", NETWORK, POLYGON_RECORD.usdc.address],
      ["batch-settlement", NETWORK, POLYGON_RECORD.usdc.address],
    ]);
    // The OpenAPI document says the same before any 402.
    const openapi = (await (await fetch(`${host}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { "x-payment-info"?: { protocols: { x402: { network: string } }[] } }>
      >;
    };
    const info = Object.values(openapi.paths["/api/store"] ?? {})[0]?.["x-payment-info"];
    expect(info?.protocols.map((p) => p.x402.network)).toEqual(required.accepts.map((a) => a.network));

    // A buyer on each chain, Polygon's holding nothing on Base: were its funds read on the host's first chain,
    // its writes would be refused (insufficient_funds).
    const buyers = {
      base: privateKeyToAccount((base.buyers[0] as DevnetAccount).privateKey),
      polygon: privateKeyToAccount((devnet.buyers[1] as DevnetAccount).privateKey),
    };
    const usdcOn = {
      base: usdcReader(base.rpc, BASE_RECORD.usdc.address),
      polygon: usdcReader(devnet.rpc, POLYGON_RECORD.usdc.address),
    };
    expect(await usdcOn.base.balanceOf(buyers.polygon.address)).toBe(0n);
    const before = {
      base: await usdcOn.base.balanceOf(buyers.base.address),
      polygon: await usdcOn.polygon.balanceOf(buyers.polygon.address),
    };
    const payOn = (network: `${string}:${string}`, chain: keyof typeof buyers) =>
      wrapFetchWithPayment(fetch, new x402Client().register(network, new ExactClient(buyers[chain])));
    const calls = { base: 2, polygon: 5 };
    for (const [chain, network] of [
      ["base", BASE_RECORD.caip2],
      ["polygon", NETWORK],
    ] as const) {
      const pay = payOn(network as `${string}:${string}`, chain);
      for (let i = 0; i < calls[chain]; i++) {
        // A write: the payer's funds are read before it runs, on the chain it pays on (payments/ledger/funds.ts).
        const answer = await pay(`${host}/api/store/insert`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ collection: "visits", rows: [{ chain, i }] }),
        });
        expect(answer.status, await answer.clone().text()).toBe(200);
        const settled = decodePaymentResponseHeader(answer.headers.get("payment-response") as string);
        expect(settled.network).toBe(network);
        // Sent on the payment's chain by that chain's settling key.
        const sent = await usdcOn[chain].client.getTransaction({
          hash: settled.transaction as `0x${string}`,
        });
        expect(sent.from.toLowerCase()).toBe(
          (chain === "base" ? base.facilitatorAccount.address : polygonSigner.address).toLowerCase(),
        );
      }
    }
    // One Polygon payment sent four times at once, through the one facilitator's front: run and charged once.
    const write = {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ collection: "visits", rows: [{ chain: "polygon", at: "once" }] }),
    };
    const unpaid = await fetch(`${host}/api/store/insert`, write);
    const payment = await new x402Client()
      .register(NETWORK, new ExactClient(buyers.polygon))
      .createPaymentPayload(decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string));
    const signed = {
      ...write,
      headers: { ...write.headers, "payment-signature": encodePaymentSignatureHeader(payment) },
    };
    const statuses = (
      await Promise.all(Array.from({ length: 4 }, () => fetch(`${host}/api/store/insert`, signed)))
    ).map((a) => a.status);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    calls.polygon += 1;
    // A payment channel on Polygon: a deposit, vouchers, the host's claim on Polygon (its schedule for that
    // chain, asked now through `channels claim`), then the buyer's refund of the rest.
    const channel = await payByChannel(buyers.polygon, url);
    const claimed = await runMain(["channels", "claim", "--data", state.dataDir], { DATABASE_URL: "" });
    expect(claimed.code, claimed.stderr).toBe(0);
    const claims = claimed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { network: string; channels: string[]; transactions: string[] });
    expect(claims.map((c) => [c.network, c.channels.length, c.transactions.length])).toEqual([
      [BASE_RECORD.caip2, 0, 0],
      [NETWORK, 1, 1],
    ]);
    const claim = await usdcOn.polygon.client.getTransactionReceipt({
      hash: claims[1]?.transactions[0] as `0x${string}`,
    });
    expect(claim.status).toBe("success");
    // The SDK's cooperative refund takes the first channel a 402 lists: Polygon's at the host's Polygon path.
    const refundTerms = decodePaymentRequiredHeader(
      (await fetch(`${host}/channels/refund/polygon`)).headers.get("payment-required") as string,
    );
    expect(refundTerms.accepts.map((a) => [a.scheme, a.network])).toEqual([["batch-settlement", NETWORK]]);
    // Like every path of a host: HEAD is the unpaid GET, a method it does not take 405.
    expect((await fetch(`${host}/channels/refund/polygon`, { method: "HEAD" })).status).toBe(402);
    expect((await fetch(`${host}/channels/refund/polygon`, { method: "POST" })).status).toBe(405);
    expect(await channel.refund(`${host}/channels/refund/polygon`)).toMatchObject({ success: true });
    const channelPaid = PRICE * BigInt(CHANNEL_CALLS);

    expect(await usdcOn.base.balanceOf(buyers.base.address)).toBe(before.base - PRICE * BigInt(calls.base));
    expect(await usdcOn.polygon.balanceOf(buyers.polygon.address)).toBe(
      before.polygon - PRICE * BigInt(calls.polygon) - channelPaid,
    );

    // The facilitator's Bazaar lists the route as paid on each network.
    const listed = (await (
      await fetch(`${facilitator.facilitator}/discovery/resources?limit=100`)
    ).json()) as {
      items: { resource: string; accepts: { network: string }[] }[];
    };
    const insert = listed.items.find((item) => item.resource === `${host}/api/store/insert`);
    expect(new Set(insert?.accepts.map((a) => a.network))).toEqual(new Set([BASE_RECORD.caip2, NETWORK]));

    // Both chains indexed into one store: each report counts its chain's payments and no other's.
    const analytics = await isolatedDatabaseOptions("pglite");
    onTestFinished(analytics.cleanup);
    for (const [chain, net] of [
      ["base", base],
      ["polygon", devnet],
    ] as const) {
      const head = Number(await (chain === "base" ? usdcOn.base : usdcOn.polygon).client.getBlockNumber());
      const indexed = await runMain([
        "index",
        "--rpc",
        net.rpc,
        "--chain",
        chain,
        "--facilitator",
        chain === "base" ? net.facilitatorAccount.address : polygonSigner.address,
        "--to-block",
        String(head),
        "--data",
        analytics.dataDir,
      ]);
      expect(indexed.code, indexed.stderr).toBe(0);
    }
    for (const chain of ["base", "polygon"] as const) {
      const report = await runMain(["report", payTo, "--chain", chain, "--data", analytics.dataDir]);
      expect(report.code, report.stderr).toBe(0);
      expect(JSON.parse(report.stdout)).toMatchObject({
        chain,
        address: payTo.toLowerCase(),
        // On Polygon the channel's charges are one payment more, its claim.
        tx: calls[chain] + (chain === "polygon" ? 1 : 0),
        usd:
          Math.round((Number(PRICE) * calls[chain] + (chain === "polygon" ? Number(channelPaid) : 0)) / 1e4) /
          100,
      });
    }
  }, 120_000);
});
