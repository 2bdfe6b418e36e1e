import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import {
  type DiscoveryResource,
  type DiscoveryResourcesResponse,
  declareDiscoveryExtension,
} from "@x402/extensions/bazaar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/chain/devnet/index.ts";
import { type Database, openDatabase } from "../../src/common/db/index.ts";
import {
  ChainMismatchError,
  type Facilitator,
  inProcessClient,
  type OnNewChain,
  reasons,
} from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { DATABASE_KINDS, isolatedDatabaseOptions, type TestDatabaseOptions } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { bazaarGet, NETWORK, newMerchant, pay, requirementsFor } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 2 });
let dbOptions: TestDatabaseOptions;
let db: Database;
let facilitator: Facilitator;

/** The facilitator on its PGlite directory (reopened by the restart case). */
async function open() {
  db = await openDatabase(dbOptions);
  facilitator = await devnetFacilitator(chain.devnet, db);
}
async function close() {
  await facilitator?.close();
  await db?.close();
}

beforeAll(async () => {
  dbOptions = await isolatedDatabaseOptions("pglite");
  await open();
});
afterAll(async () => {
  await close();
  await dbOptions?.cleanup();
});

const post = (path: string, body: unknown) =>
  facilitator.app.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const get = (path: string) => facilitator.app.request(path);
const request = (payload: PaymentPayload, requirements: PaymentRequirements) => ({
  x402Version: 2,
  paymentPayload: payload,
  paymentRequirements: requirements,
});

/** Verifies and settles over HTTP; returns the settle response and its decoded EXTENSION-RESPONSES. */
async function buy(payload: PaymentPayload, requirements: PaymentRequirements) {
  const verified = await post("/verify", request(payload, requirements));
  expect(await verified.json()).toMatchObject({ isValid: true });
  const settled = await post("/settle", request(payload, requirements));
  expect(settled.status).toBe(200);
  const header = settled.headers.get("EXTENSION-RESPONSES");
  return {
    body: (await settled.json()) as SettleResponse,
    extensions: header ? JSON.parse(Buffer.from(header, "base64").toString("utf8")) : undefined,
  };
}

describe("facilitator HTTP", () => {
  it("serves /supported, /healthz and JSON 404s", async () => {
    const supported = {
      kinds: [
        { x402Version: 2, scheme: "exact", network: NETWORK },
        // The upto scheme's buyers sign for the facilitator that may settle: it is named here.
        {
          x402Version: 2,
          scheme: "upto",
          network: NETWORK,
          extra: { facilitatorAddress: chain.devnet.facilitatorAccount.address },
        },
        // It offers to sign channels' claims and refunds as their receiverAuthorizer.
        {
          x402Version: 2,
          scheme: "batch-settlement",
          network: NETWORK,
          extra: { receiverAuthorizer: chain.devnet.facilitatorAccount.address },
        },
        // x402 v1's exact scheme, on the devnet's chain by its v1 name (docs/facilitator.md, "x402 v1").
        { x402Version: 1, scheme: "exact", network: "base" },
      ],
      // Its builder code is appended to what it settles (docs/facilitator.md, "Builder codes"); it sponsors
      // the Permit2 approval of a wallet without one ("Gas sponsoring").
      extensions: ["bazaar", "builder-code", "eip2612GasSponsoring", "erc20ApprovalGasSponsoring"],
      signers: { "eip155:*": [chain.devnet.facilitatorAccount.address] },
    };
    expect(await (await get("/supported")).json()).toEqual(supported);
    // The same facilitator as a FacilitatorClient in this process, for an x402ResourceServer without HTTP.
    expect(await inProcessClient(facilitator).getSupported()).toEqual(supported);
    expect(await (await get("/healthz")).json()).toEqual({ ok: true });
    const missing = await get("/nope");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: "not_found", message: "no route for GET /nope" } });
  });

  it("answers a malformed verify or settle body with 400 in the spec's response shape", async () => {
    const payment = await pay(chain.devnet.buyers[0] as Devnet["buyers"][0], requirementsFor(newMerchant()));
    const cases: [unknown, string][] = [
      ["{not json", reasons.INVALID_PAYLOAD],
      [[], reasons.INVALID_PAYLOAD],
      [{ paymentPayload: payment, paymentRequirements: payment.accepted }, reasons.INVALID_X402_VERSION],
      [
        { x402Version: 1, paymentPayload: payment, paymentRequirements: payment.accepted },
        reasons.INVALID_X402_VERSION,
      ],
      [{ x402Version: 2, paymentPayload: payment }, reasons.INVALID_PAYMENT_REQUIREMENTS],
      [
        {
          x402Version: 2,
          paymentPayload: { ...payment, accepted: 7 },
          paymentRequirements: payment.accepted,
        },
        reasons.INVALID_PAYLOAD,
      ],
      [
        request(payment, { ...payment.accepted, maxTimeoutSeconds: -1 }),
        reasons.INVALID_PAYMENT_REQUIREMENTS,
      ],
      [
        request({ ...payment, payload: { ...payment.payload, signature: "0x1234" } }, payment.accepted),
        reasons.INVALID_PAYLOAD,
      ],
      // An exact payment through the Permit2 proxy, of the wrong shape.
      [
        request({ ...payment, payload: { permit2Authorization: {}, signature: "0x" } }, payment.accepted),
        reasons.INVALID_PAYLOAD,
      ],
    ];
    for (const [body, reason] of cases) {
      const verify = await post("/verify", body);
      expect(verify.status, JSON.stringify(body)).toBe(400);
      expect(await verify.json()).toMatchObject({
        isValid: false,
        invalidReason: reason,
        invalidMessage: expect.any(String),
      });
      const settle = await post("/settle", body);
      expect(settle.status).toBe(400);
      expect(await settle.json()).toMatchObject({
        success: false,
        errorReason: reason,
        transaction: "",
        network: NETWORK,
      });
    }
    const huge = await post("/verify", { x402Version: 2, padding: "x".repeat(100_000) });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { code: "payload_too_large" } });
  });

  it("judges well-formed requests it does not serve with 200 and isValid false", async () => {
    const requirements = requirementsFor(newMerchant());
    const payment = await pay(chain.devnet.buyers[0] as Devnet["buyers"][0], requirements);
    const elsewhere = { ...requirements, network: "eip155:1" as const };
    const otherAsset = { ...requirements, asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" };
    const cases: [PaymentPayload, PaymentRequirements, string][] = [
      [{ ...payment, accepted: elsewhere }, elsewhere, reasons.INVALID_NETWORK],
      [payment, otherAsset, reasons.UNSUPPORTED_ASSET],
      [payment, { ...requirements, scheme: "upto" }, reasons.UNSUPPORTED_SCHEME],
      [
        { ...payment, accepted: { ...requirements, scheme: "deferred" } },
        { ...requirements, scheme: "deferred" },
        reasons.UNSUPPORTED_SCHEME,
      ],
      // upto is paid with a Permit2 authorization, not an EIP-3009 one.
      [
        { ...payment, accepted: { ...requirements, scheme: "upto" } },
        { ...requirements, scheme: "upto" },
        reasons.UNSUPPORTED_PAYLOAD_TYPE,
      ],
    ];
    for (const [payload, reqs, reason] of cases) {
      const verify = await post("/verify", request(payload, reqs));
      expect(verify.status).toBe(200);
      expect(await verify.json()).toMatchObject({ isValid: false, invalidReason: reason });
    }
    // /settle verifies what /verify never saw (x402's upfront flow), and answers its refusal the same way.
    const forged = structuredClone(payment);
    (forged.payload as { authorization: { value: string } }).authorization.value = "999999";
    const unverified = await post("/settle", request(forged, { ...requirements, amount: "999999" }));
    expect(unverified.status).toBe(200);
    expect(await unverified.json()).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_signature",
      transaction: "",
      network: NETWORK,
    });
  });

  it("answers a repeated /settle of a settled authorization as the official facilitator does", async () => {
    const requirements = requirementsFor(newMerchant());
    const payment = await pay(chain.devnet.buyers[1] as Devnet["buyers"][0], requirements);
    const first = await buy(payment, requirements);
    expect(first.body).toMatchObject({ success: true, network: NETWORK });

    // A stock resource server delivers on success only: the repeat must be a failure, in the settle
    // response's shape, with the reason @x402/evm's facilitator gives, and no second transaction.
    const again = await post("/settle", request(payment, requirements));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
      errorMessage: expect.any(String),
      payer: chain.devnet.buyers[1]?.address,
      transaction: "",
      network: NETWORK,
    });
    expect(reasons.NONCE_ALREADY_USED).toBe("invalid_exact_evm_nonce_already_used");
  });
});

describe("Bazaar", () => {
  const [m1, m2] = [newMerchant(), newMerchant()];
  const weather = requirementsFor(m1, "1000");
  const news = requirementsFor(m2, "3000");
  const tools = requirementsFor(m1, "5000");

  beforeAll(async () => {
    const [alice, bob] = chain.devnet.buyers as [Devnet["buyers"][0], Devnet["buyers"][0]];
    // In order: weather (twice), news, an MCP tool; then one payment without the extension and one with a
    // broken extension, which are paid but not listed.
    for (const buyer of [alice, bob]) {
      const { extensions } = await buy(
        await pay(buyer, weather, { url: "http://shop.test/weather?city=Lisbon" }, bazaarGet()),
        weather,
      );
      expect(extensions).toEqual({ bazaar: { status: "success" } });
    }
    await buy(
      await pay(
        alice,
        news,
        { url: "http://news.test/today", description: "Today's headlines", mimeType: "application/json" },
        bazaarGet({ topic: "world" }),
      ),
      news,
    );
    const mcp = declareDiscoveryExtension({
      toolName: "lookup",
      description: "Looks a word up",
      inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    });
    await buy(await pay(bob, tools, { url: "http://mcp.test/mcp" }, mcp), tools);

    const plain = await buy(await pay(alice, weather, { url: "http://plain.test/x" }), weather);
    expect(plain.body.success).toBe(true);
    expect(plain.extensions).toBeUndefined();
    const broken = bazaarGet();
    (broken.bazaar as unknown as { info: { input: { method: string } } }).info.input.method = "BREW";
    const rejected = await buy(await pay(bob, weather, { url: "http://broken.test/x" }, broken), weather);
    expect(rejected.body.success).toBe(true);
    expect(rejected.extensions).toMatchObject({ bazaar: { status: "rejected" } });
  });

  const list = async (query = ""): Promise<DiscoveryResourcesResponse> => {
    const response = await get(`/discovery/resources${query}`);
    expect(response.status).toBe(200);
    return (await response.json()) as DiscoveryResourcesResponse;
  };
  /** The discovery info's `input` an item echoes. */
  const inputOf = (item: DiscoveryResource) =>
    (item.extensions as { bazaar: { info: { input: Record<string, unknown> } } }).bazaar.info.input;

  it("lists what was paid for, latest first, in the discovery response shape", async () => {
    const all = await list();
    expect(all.x402Version).toBe(2);
    expect(all.pagination).toEqual({ limit: 20, offset: 0, total: 3 });
    expect(all.items.map((i) => i.resource)).toEqual([
      "http://mcp.test/mcp",
      "http://news.test/today",
      "http://shop.test/weather",
    ]);
    const [mcp, newsItem, weatherItem] = all.items as [
      DiscoveryResource,
      DiscoveryResource,
      DiscoveryResource,
    ];
    expect(Object.keys(weatherItem).sort()).toEqual([
      "accepts",
      "extensions",
      "lastUpdated",
      "resource",
      "type",
      "x402Version",
    ]);
    expect(weatherItem).toMatchObject({ type: "http", x402Version: 2, accepts: [weather] });
    expect(inputOf(weatherItem)).toMatchObject({ type: "http", method: "GET" });
    expect(new Date(weatherItem.lastUpdated).toISOString()).toBe(weatherItem.lastUpdated);
    expect(newsItem).toMatchObject({
      description: "Today's headlines",
      mimeType: "application/json",
      accepts: [news],
    });
    expect(mcp).toMatchObject({ type: "mcp", accepts: [tools] });
    expect(inputOf(mcp)).toMatchObject({ type: "mcp", toolName: "lookup" });
  });

  it("filters by type and payTo, and pages with limit and offset", async () => {
    const resources = (page: { items: { resource: string }[] }) => page.items.map((i) => i.resource);
    expect(resources(await list("?type=mcp"))).toEqual(["http://mcp.test/mcp"]);
    expect(resources(await list("?type=http"))).toEqual([
      "http://news.test/today",
      "http://shop.test/weather",
    ]);
    expect(resources(await list(`?payTo=${m1}`))).toEqual([
      "http://mcp.test/mcp",
      "http://shop.test/weather",
    ]);
    expect(resources(await list(`?payTo=${m2.toLowerCase()}&type=http`))).toEqual(["http://news.test/today"]);
    expect(resources(await list(`?payTo=${newMerchant()}`))).toEqual([]);
    expect(resources(await list("?network=eip155:8453&scheme=exact&extensions=bazaar"))).toHaveLength(3);
    const page = await list("?limit=1&offset=1");
    expect(resources(page)).toEqual(["http://news.test/today"]);
    expect(page.pagination).toEqual({ limit: 1, offset: 1, total: 3 });
    expect(await list("?offset=5")).toMatchObject({ items: [], pagination: { total: 3 } });
  });

  it("clamps limit into 1-100, and answers bad query parameters with a 400 JSON error", async () => {
    for (const [query, limit] of [
      ["limit=0", 1],
      ["limit=101", 100],
      ["limit=100000", 100],
    ] as const) {
      const response = await get(`/discovery/resources?${query}`);
      expect(response.status, query).toBe(200);
      expect(((await response.json()) as { pagination: { limit: number } }).pagination.limit).toBe(limit);
    }
    for (const [query, code] of [
      ["limit=ten", "bad_limit"],
      ["offset=-1", "bad_offset"],
      ["type=ftp", "bad_type"],
      ["payTo=0x1234", "bad_pay_to"],
      ["network=a%20b", "bad_network"],
    ]) {
      const response = await get(`/discovery/resources?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toEqual({ error: { code, message: expect.any(String) } });
    }
  });

  it("keeps the Bazaar across a restart", async () => {
    const before = await list("?limit=100");
    await close();
    await open();
    expect(await list("?limit=100")).toEqual(before);
  });
});

describe("chain identity", () => {
  it("refuses a ledger of another chain, or clears it when told the chain is new", async () => {
    const other = await isolatedDatabaseOptions(DATABASE_KINDS.at(-1) ?? "pglite");
    const otherDb = await openDatabase(other);
    const start = (onNewChain: OnNewChain) => devnetFacilitator(chain.devnet, otherDb, { onNewChain });
    try {
      await (await start("fail")).close();
      await otherDb.query("UPDATE facilitator_meta SET value = '0xfeed' WHERE key = 'genesis:eip155:8453'");
      await otherDb.query(
        "INSERT INTO bazaar_resources (resource, type, x402_version) VALUES ('http://old.test/', 'http', 2)",
      );
      await expect(start("fail")).rejects.toThrow(ChainMismatchError);
      await expect(start("fail")).rejects.toThrow(/belongs to the chain with genesis 0xfeed/);
      await (await start("reset")).close();
      expect((await otherDb.query("SELECT * FROM bazaar_resources")).rowCount).toBe(0);
      await (await start("fail")).close();
      // A database from before the ledgers were kept per chain names one genesis, unkeyed: taken as this
      // chain's (its ledger holds no other chain's), and held to it: refused, nothing changed.
      await otherDb.query("DELETE FROM facilitator_meta WHERE key = 'genesis:eip155:8453'");
      await otherDb.query("INSERT INTO facilitator_meta (key, value) VALUES ('genesis', '0xfeed')");
      await expect(start("fail")).rejects.toThrow(/belongs to the chain with genesis 0xfeed/);
      expect(
        (await otherDb.query("SELECT key FROM facilitator_meta WHERE key LIKE 'genesis%'")).rows,
      ).toEqual([{ key: "genesis" }]);
    } finally {
      await otherDb.close();
      await other.cleanup();
    }
  });
});
