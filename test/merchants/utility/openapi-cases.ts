/**
 * The utility API's document held to the truth (test/helpers/openapi-truth.ts): per operation the call
 * that succeeds and a call for each refusal the endpoint documents itself, against fixtures on 127.0.0.1
 * (a web site, a DNS server, fake providers). The kit's statuses are made from each `ok` call. The
 * operations are split in groups, one test file each, so that vitest runs them side by side.
 */
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { utilityMerchant } from "../../../src/merchants/utility/catalogue.ts";
import { writeScratchpad } from "../../../src/merchants/utility/state/scratchpad-engine.ts";
import { insertRows } from "../../../src/merchants/utility/state/store-engine.ts";
import { type StateOptions, walletScope } from "../../../src/merchants/utility/state/wallet.ts";
import { MAX_IMAGE_BYTES } from "../../../src/merchants/utility/vectorize/image.ts";
import { html, startFixtureServer } from "../../helpers/fixtures/index.ts";
import { type Call, type CaseTable, startTruthHosts, type TruthHosts } from "../../helpers/openapi-truth.ts";
import { type FakeUpstream, startAnthropicUpstream } from "../../helpers/upstreams/anthropic.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../helpers/upstreams/openai.ts";
import { type FakeSearch, startBrave } from "../../helpers/upstreams/search.ts";
import { newMerchant } from "../../helpers/x402.ts";
import { startDnsFixture } from "./lookup/dns-fixture.ts";
import { fixtureHtml } from "./pages/fixtures.ts";
import { twoShapesAs } from "./vectorize/images.ts";

/** A quota a few rows pass: a 507 needs kilobytes, not 50 MB. */
export const STATE: StateOptions = { quotaBytes: 4000 };

/**
 * A work budget a tiny conversion passes and 80,000 rows do not (100 ms of CPU at convert's $0.005, 90 of
 * them the conversion process's): a 422 needs a second of work, not the ten its price buys.
 */
const WORK = { cpuMs: 20, memoryMb: 200 };

/** 80,000 CSV rows of six columns (about 4.2 MB, under the 5 MiB cap), converted to SQL INSERTs: a second or more of CPU. */
const MANY_ROWS = `id,name,city,note,n,x\n${Array.from({ length: 80_000 }, (_, i) => `${i},name ${i},city ${i % 97},"a note, quoted ${i}",${i * 7},x${i}`).join("\n")}\n`;

/** What the calls reach besides the merchant: the web site its pages come from, and its providers. */
export interface UtilityFixtures {
  /** The site's base URL, no trailing slash: /article, /images, /head, /wcag, /gone (404), /shapes.png. */
  site: string;
  png: Buffer;
  llm: FakeUpstream;
  images: FakeOpenAI;
  brave: FakeSearch;
}

const q = encodeURIComponent;
const get = (path: string): Call => ({ path });
const post = (path: string, body: unknown): Call => ({
  path,
  init: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
});

const scope = (db: Database, wallet: DevnetAccount) => walletScope(db, wallet.address, STATE);
/** The wallet's collection `leads`, one row. */
const collection = async (hosts: TruthHosts, wallet: DevnetAccount) => {
  await insertRows(scope(hosts.db, wallet), "leads", [{ name: "Ada" }]);
};
/** The wallet's scratchpad `notes`. */
const scratchpad = async (hosts: TruthHosts, wallet: DevnetAccount) => {
  await writeScratchpad(scope(hosts.db, wallet), { name: "notes", content: "hello", mode: "replace" });
};

/** A page endpoint's cases: the fixture page it reads, a URL refused, a page that answers 404. */
function pageCases(path: string, page: string, site: string) {
  return {
    ok: { call: () => get(`${path}?url=${q(`${site}/${page}`)}`) },
    errors: {
      400: { why: "a private address", call: () => get(`${path}?url=${q("http://10.0.0.1/")}`) },
      422: { why: "a page that answers 404", call: () => get(`${path}?url=${q(`${site}/gone`)}`) },
    },
  };
}

const hello = { model: "any", max_tokens: 50, messages: [{ role: "user", content: "Hello" }] };

export function utilityCases(f: UtilityFixtures): CaseTable {
  const replies = () => {
    f.llm.behaviour = {
      kind: "reply",
      // The translation's contract is a JSON object; any other call takes the text.
      text: (body: { system?: string }) =>
        /translat/i.test(body.system ?? "")
          ? JSON.stringify({ source_language: "en", translation: "Hallo" })
          : "Hi.",
    };
    f.brave.fail = null;
    f.images.image = { kind: "png" };
  };
  const failing = async () => {
    f.llm.behaviour = { kind: "status", status: 500 };
    f.brave.fail = 500;
    f.images.image = { kind: "status", status: 500 };
  };
  const upstreamFails = (call: () => Call) => ({
    502: { why: "the provider answers 500", setup: failing, call },
  });
  return {
    "GET /api/seo/alt-check": pageCases("/api/seo/alt-check", "images", f.site),
    "GET /api/scrape": pageCases("/api/scrape", "article", f.site),
    "GET /api/ping": {
      ok: { call: () => get(`/api/ping?url=${q(`${f.site}/article`)}`) },
      errors: {
        400: { why: "a private address", call: () => get(`/api/ping?url=${q("http://10.0.0.1/")}`) },
      },
    },
    "GET /api/store": { ok: { call: () => get("/api/store") } },
    "POST /api/store/insert": {
      ok: {
        ownWallet: true,
        call: () => post("/api/store/insert", { collection: "leads", rows: [{ a: 1 }] }),
      },
      errors: {
        400: {
          why: "CSV with a repeated column",
          ownWallet: true,
          call: () => post("/api/store/insert", { collection: "leads", csv: "a,a\n1,2\n" }),
        },
        507: {
          why: "rows past the quota",
          ownWallet: true,
          call: () =>
            post("/api/store/insert", {
              collection: "big",
              rows: [{ t: "x".repeat(2500) }, { t: "y".repeat(2500) }],
            }),
        },
      },
    },
    "GET /api/store/query": {
      ok: { ownWallet: true, setup: collection, call: () => get("/api/store/query?collection=leads") },
      errors: {
        400: {
          why: "a next_token it never gave",
          ownWallet: true,
          setup: collection,
          call: () => get("/api/store/query?collection=leads&next_token=nope"),
        },
        404: { why: "no such collection", call: () => get("/api/store/query?collection=none") },
      },
    },
    "GET /api/store/export": {
      ok: {
        ownWallet: true,
        setup: collection,
        call: () => get("/api/store/export?collection=leads&format=csv"),
      },
      errors: { 404: { why: "no such collection", call: () => get("/api/store/export?collection=none") } },
    },
    "POST /api/store/delete": {
      ok: {
        ownWallet: true,
        setup: collection,
        call: () => post("/api/store/delete", { collection: "leads", where: {} }),
      },
      errors: {
        404: {
          why: "no such collection",
          call: () => post("/api/store/delete", { collection: "none", where: {} }),
        },
      },
    },
    "POST /api/store/drop": {
      ok: {
        ownWallet: true,
        setup: collection,
        call: () => post("/api/store/drop", { collection: "leads" }),
      },
      errors: {
        404: { why: "no such collection", call: () => post("/api/store/drop", { collection: "none" }) },
      },
    },
    "POST /api/store/expire": {
      ok: {
        ownWallet: true,
        setup: collection,
        call: () => post("/api/store/expire", { collection: "leads", ttl_seconds: 60 }),
      },
      errors: {
        400: {
          why: "an expiry in the past",
          ownWallet: true,
          setup: collection,
          call: () => post("/api/store/expire", { collection: "leads", expires_at: "2001-01-01T00:00:00Z" }),
        },
        404: {
          why: "no such collection",
          call: () => post("/api/store/expire", { collection: "none", ttl_seconds: 60 }),
        },
      },
    },
    "GET /api/timezone": { ok: { call: () => get("/api/timezone?lat=40.7128&lng=-74.006") } },
    "GET /api/geo": {
      ok: { call: () => get("/api/geo?ip=8.8.8.8") },
      errors: {
        400: { why: "no ip, and the caller's own address is loopback", call: () => get("/api/geo") },
        // 3ffe::/16 was the 6bone's, handed back in 2006: public, and nobody's.
        404: { why: "an address no one is located at", call: () => get(`/api/geo?ip=${q("3ffe::1")}`) },
      },
    },
    "GET /api/calc": {
      ok: { call: () => get(`/api/calc?expr=${q("2^64 + 1/7")}`) },
      errors: {
        400: { why: "an unknown function", call: () => get(`/api/calc?expr=${q("frobnicate(2)")}`) },
      },
    },
    "GET /api/a11y/contrast": { ok: { call: () => get(`/api/a11y/contrast?fg=${q("#777")}&bg=fff`) } },
    "GET /api/scratchpad": { ok: { call: () => get("/api/scratchpad") } },
    "POST /api/scratchpad/write": {
      ok: { ownWallet: true, call: () => post("/api/scratchpad/write", { name: "notes", content: "hello" }) },
      errors: {
        400: {
          why: "JSON content that does not parse",
          ownWallet: true,
          call: () => post("/api/scratchpad/write", { name: "doc", content: "{", content_type: "json" }),
        },
        409: {
          why: "create over an existing scratchpad",
          ownWallet: true,
          setup: scratchpad,
          call: () => post("/api/scratchpad/write", { name: "notes", content: "again", mode: "create" }),
        },
        507: {
          why: "content past the quota",
          ownWallet: true,
          call: () => post("/api/scratchpad/write", { name: "big", content: "x".repeat(5000) }),
        },
      },
    },
    "GET /api/scratchpad/read": {
      ok: { ownWallet: true, setup: scratchpad, call: () => get("/api/scratchpad/read?name=notes") },
      errors: { 404: { why: "no such scratchpad", call: () => get("/api/scratchpad/read?name=none") } },
    },
    "POST /api/scratchpad/delete": {
      ok: {
        ownWallet: true,
        setup: scratchpad,
        call: () => post("/api/scratchpad/delete", { name: "notes" }),
      },
      errors: {
        404: { why: "no such scratchpad", call: () => post("/api/scratchpad/delete", { name: "none" }) },
      },
    },
    "GET /api/seo/metadata": pageCases("/api/seo/metadata", "head", f.site),
    "GET /api/summarize": pageCases("/api/summarize", "article", f.site),
    "GET /api/dns": {
      ok: { call: () => get("/api/dns?domain=example.com") },
      errors: {
        502: {
          why: "a name the server answers SERVFAIL for",
          call: () => get("/api/dns?domain=broken.example.net"),
        },
        504: { why: "a name the server never answers", call: () => get("/api/dns?domain=slow.example.net") },
      },
    },
    "GET /api/email/verify": {
      ok: { call: () => get(`/api/email/verify?email=${q("jane@gmail.com")}`) },
      errors: {
        502: {
          why: "a domain the server answers SERVFAIL for",
          call: () => get(`/api/email/verify?email=${q("a@broken.example.net")}`),
        },
        504: {
          why: "a domain the server never answers",
          call: () => get(`/api/email/verify?email=${q("a@slow.example.net")}`),
        },
      },
    },
    "GET /api/icon/search": { ok: { call: () => get("/api/icon/search?q=github&limit=1") } },
    "POST /api/icon/generate": {
      ok: { call: () => post("/api/icon/generate", { name: "circle", size: 32 }) },
    },
    "POST /api/data/convert": {
      ok: { call: () => post("/api/data/convert", { data: '[{"a":1}]', from: "json", to: "csv" }) },
      errors: {
        400: {
          why: "data that is not JSON",
          call: () => post("/api/data/convert", { data: "not json", from: "json", to: "csv" }),
        },
        422: {
          why: "a conversion past the call's CPU budget (this host's is small: `WORK`)",
          call: () => post("/api/data/convert", { data: MANY_ROWS, from: "csv", to: "sql" }),
        },
      },
    },
    "POST /v1/messages": {
      ok: { setup: async () => replies(), call: () => post("/v1/messages", hello) },
      errors: {
        ...upstreamFails(() => post("/v1/messages", hello)),
        503: {
          why: "the model rate limits the server",
          setup: async () => {
            f.llm.behaviour = { kind: "status", status: 429 };
          },
          call: () => post("/v1/messages", hello),
        },
      },
    },
    "POST /api/search": {
      ok: {
        setup: async () => replies(),
        call: () => post("/api/search", { query: "x402", max_results: 2 }),
      },
      errors: upstreamFails(() => post("/api/search", { query: "x402", max_results: 2 })),
    },
    "GET /api/qr": { ok: { call: () => get("/api/qr?data=hello&size=128") } },
    "GET /api/a11y/check": pageCases("/api/a11y/check", "wcag", f.site),
    "POST /api/translate-text": {
      ok: {
        setup: async () => replies(),
        call: () => post("/api/translate-text", { text: "Hello", target: "German" }),
      },
      errors: {
        400: {
          why: "a language nobody speaks",
          call: () => post("/api/translate-text", { text: "Hello", target: "Qwertyish" }),
        },
        ...upstreamFails(() => post("/api/translate-text", { text: "Hello", target: "German" })),
      },
    },
    "GET /api/uptime/report": {
      ok: { call: () => get(`/api/uptime/report?url=${q(`${f.site}/article`)}`) },
      errors: {
        400: { why: "a private address", call: () => get(`/api/uptime/report?url=${q("http://10.0.0.1/")}`) },
      },
    },
    "POST /api/vectorize": {
      ok: { call: () => post("/api/vectorize", { image_base64: f.png.toString("base64") }) },
      errors: {
        400: {
          why: "bytes that are no image",
          call: () => post("/api/vectorize", { image_base64: Buffer.from("hello").toString("base64") }),
        },
        413: {
          why: "an image one byte over 10 MB",
          call: () =>
            post("/api/vectorize", { image_base64: Buffer.alloc(MAX_IMAGE_BYTES + 1).toString("base64") }),
        },
        422: {
          why: "an image URL that answers 404",
          call: () => post("/api/vectorize", { image_url: `${f.site}/gone.png` }),
        },
        503: {
          why: "the hosted engine, none configured",
          call: () => post("/api/vectorize", { image_base64: f.png.toString("base64"), engine: "hosted" }),
        },
      },
    },
    "POST /api/generate-image": {
      ok: {
        setup: async () => replies(),
        call: () => post("/api/generate-image", { prompt: "a red circle" }),
      },
      errors: upstreamFails(() => post("/api/generate-image", { prompt: "a red circle" })),
    },
  };
}

export interface UtilityTruth {
  hosts: TruthHosts;
  table: CaseTable;
  close(): Promise<void>;
}

/**
 * The utility API as production builds it (`utilityMerchant`), its providers fakes on 127.0.0.1, its
 * fetches allowed to the fixture site there, its DNS a fixture server, its quota small: served three
 * ways (openapi-truth.ts) with `buyers` wallets for the cases that need their own, its held and cut-off
 * hosts serving `operations`, those of the calling file.
 */
export async function startUtilityTruth(
  buyers: number,
  operations: readonly string[],
): Promise<UtilityTruth> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const fn of closers.reverse()) await fn();
  };
  try {
    const site = await startFixtureServer({
      routes: Object.fromEntries([
        ...(["article", "images", "head", "wcag"] as const).map((page) => [
          `/${page}`,
          html(fixtureHtml(page)),
        ]),
        ["/gone", html("<html><head><title>Gone</title></head><body><h1>Not found</h1></body></html>", 404)],
      ]),
    });
    closers.push(() => site.close());
    const dns = await startDnsFixture();
    closers.push(() => dns.close());
    const [llm, images, brave] = await Promise.all([
      startAnthropicUpstream("sk-truth"),
      startOpenAIUpstream("sk-truth"),
      startBrave("brave-truth"),
    ]);
    closers.push(
      () => llm.close(),
      () => images.close(),
      () => brave.close(),
    );
    // As the environment gives them: the endpoints build their adapters.
    const providers = {
      language: { dialect: "anthropic" as const, url: llm.base, key: "sk-truth", model: "claude-test-1" },
      search: { backend: "brave" as const, url: brave.base, key: "brave-truth" },
      image: { url: images.base, key: "sk-truth", model: "gpt-image-test" },
    };
    const payTo = newMerchant();
    const hosts = await startTruthHosts(
      (publicUrl) =>
        utilityMerchant({
          payTo,
          publicUrl,
          // Long enough for a busy machine's fixture to answer, or SERVFAIL would read as a time-out.
          dns: { servers: [dns.server], timeoutMs: 2500, tries: 1, dkimBudgetMs: 1000 },
          providers,
          fetchPolicy: { allowAddresses: ["127.0.0.1"] },
          state: STATE,
          workBudget: WORK,
        }),
      { buyers, operations },
    );
    closers.push(() => hosts.close());
    const fixtures = { site: site.url.replace(/\/$/, ""), png: await twoShapesAs("png"), llm, images, brave };
    return { hosts, table: utilityCases(fixtures), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The operations of each test file: those that fetch from the fixture site or ask the DNS server, and the
 * rest; the providers' one at a time, as their fakes answer one way at a time.
 */
export const UTILITY_GROUPS = {
  fetching: [
    "GET /api/seo/alt-check",
    "GET /api/scrape",
    "GET /api/ping",
    "GET /api/seo/metadata",
    "GET /api/summarize",
    "GET /api/a11y/check",
    "GET /api/uptime/report",
    "POST /api/vectorize",
    "GET /api/timezone",
    "GET /api/geo",
    "GET /api/dns",
    "GET /api/email/verify",
  ],
  rest: [
    "GET /api/store",
    "POST /api/store/insert",
    "GET /api/store/query",
    "GET /api/store/export",
    "POST /api/store/delete",
    "POST /api/store/drop",
    "POST /api/store/expire",
    "GET /api/scratchpad",
    "POST /api/scratchpad/write",
    "GET /api/scratchpad/read",
    "POST /api/scratchpad/delete",
    "GET /api/calc",
    "GET /api/a11y/contrast",
    "GET /api/icon/search",
    "POST /api/icon/generate",
    "POST /api/data/convert",
    "GET /api/qr",
  ],
  providers: [
    "POST /v1/messages",
    "POST /api/search",
    "POST /api/translate-text",
    "POST /api/generate-image",
  ],
} as const;
