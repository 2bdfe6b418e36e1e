/** The inference catalogue: spec 4.5's prices exactly, stable aliases, /v1/models, and every tier constraint refused by the input schema. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AnyEndpoint } from "../../../src/merchant-kit/endpoint.ts";
import { openApiDocument } from "../../../src/merchant-kit/openapi.ts";
import { isGuarded } from "../../../src/merchant-kit/payments/paid-handler.ts";
import { priceToAtomic } from "../../../src/merchant-kit/price.ts";
import { MERCHANTS } from "../../../src/merchants/index.ts";
import {
  chatEndpoints,
  inferenceMerchant,
  modelsRoute,
  OFFLINE_SETTINGS,
} from "../../../src/merchants/inference/catalogue.ts";
import { meteredCoverage } from "../../../src/merchants/inference/metering.ts";
import { defaultRates, TIERS } from "../../../src/merchants/inference/tiers.ts";
import { loadConfig } from "../../../src/services/config.ts";

// Spec 4.5, copied from its tables: tier, per-call price_usd, /upto listing price_usd (null: none).
const SPEC_TIERS: [number, string, string | null][] = [
  [1, "0.002", null],
  [2, "0.002237", "0.015187"],
  [3, "0.003139", "0.004049"],
  [4, "0.005214", "0.041977"],
  [5, "0.005783", "0.043205"],
  [6, "0.007016", "0.044559"],
  [7, "0.007016", null],
  [8, "0.007157", "0.019977"],
  [9, "0.010497", null],
  [10, "0.011974", "0.028233"],
  [11, "0.013259", null],
  [12, "0.01385", null],
  [13, "0.016673", null],
  [14, "0.023386", null],
  [15, "0.037526", null],
];
const SPEC_DEFAULT_PRICE = "0.002856";
// The aliases are published paths: changing one breaks buyers. This list is their contract.
const ALIASES = [
  "t1",
  "t2",
  "t3",
  "t4",
  "t5",
  "t6",
  "t7",
  "t8",
  "t9",
  "t10",
  "t11",
  "t12",
  "t13",
  "t14",
  "t15",
];

const endpoints = chatEndpoints();
const byPath = (path: string): AnyEndpoint => {
  const e = endpoints.find((x) => x.path === path);
  if (!e) throw new Error(`no endpoint ${path}`);
  return e;
};
const hello = [{ role: "user", content: "Say hello." }];
const refusal = (path: string, body: unknown) => {
  const parsed = byPath(path).input.safeParse(body);
  expect(parsed.success, `${path} accepted ${JSON.stringify(body).slice(0, 200)}`).toBe(false);
  return (
    parsed.error?.issues
      .map((i: { path: PropertyKey[]; message: string }) => `${i.path.map(String).join(".")}: ${i.message}`)
      .join("; ") ?? ""
  );
};
const accepts = (path: string, body: unknown) => {
  const parsed = byPath(path).input.safeParse(body);
  expect(parsed.error?.issues ?? [], path).toEqual([]);
  return parsed.data;
};

describe("the inference catalogue", () => {
  it("prices every route exactly as spec 4.5 lists it", () => {
    expect(byPath("/v1/chat/completions").price).toBe(SPEC_DEFAULT_PRICE);
    expect(byPath("/v1/chat/completions").scheme ?? "exact").toBe("exact");
    for (const [n, price, upto] of SPEC_TIERS) {
      const alias = ALIASES[n - 1];
      const plain = byPath(`/v1/chat/completions/_t/${alias}`);
      expect(plain.price, `tier ${n}`).toBe(price);
      expect(plain.scheme ?? "exact").toBe("exact");
      const metered = endpoints.find((e) => e.path === `/v1/chat/completions/_t/${alias}/upto`);
      if (upto === null) expect(metered, `tier ${n} has no /upto`).toBeUndefined();
      else {
        expect(metered?.price, `tier ${n} /upto`).toBe(upto);
        // upto, or a payment channel, which charges what upto would.
        expect(metered?.scheme).toEqual(["upto", "batch-settlement"]);
      }
    }
    expect(endpoints).toHaveLength(1 + 15 + 7);
    expect(TIERS.map((t) => [t.number, t.price, t.uptoPrice])).toEqual(SPEC_TIERS);
  });

  it("keeps its aliases unique, brand-free and stable", () => {
    expect(TIERS.map((t) => t.alias)).toEqual(ALIASES);
    expect(new Set(endpoints.map((e) => `${e.method} ${e.path}`)).size).toBe(endpoints.length);
  });

  it("answers every route in OpenAI's error dialect, POST, and costs nothing upstream on the offline engine", () => {
    for (const e of endpoints) {
      expect(e.method).toBe("POST");
      expect(e.errorDialect).toBe("openai");
      expect(e.effects ?? []).toEqual([]);
      expect(e.input.safeParse(e.example.input).success, e.path).toBe(true);
      expect(e.output.safeParse(e.example.output).success, e.path).toBe(true);
      expect(e.description.length).toBeLessThanOrEqual(260);
    }
  });

  it("marks the routes an upstream serves as costing money outside", () => {
    const config = loadConfig({
      env: {
        X402M_INFERENCE_LLM_URL: "http://127.0.0.1:9/v1",
        X402M_INFERENCE_TIER_2_MODEL: "small-8b",
        X402M_INFERENCE_TIER_2_RATES: "0.02,0.05",
      },
    });
    for (const e of chatEndpoints(config.inference))
      expect(e.effects, e.path).toEqual(e.path.includes("/_t/t2") ? ["upstream"] : undefined);
  });

  it("guards the routes a local GGUF model serves: this host's work, reserved and counted like an upstream's", async () => {
    const config = loadConfig({ env: { X402M_INFERENCE_TIER_3_GGUF: "/models/small.gguf" } });
    const guarded = chatEndpoints(config.inference).filter((e) =>
      e.path.startsWith("/v1/chat/completions/_t/t3"),
    );
    expect(guarded.map((e) => [e.path, e.effects])).toEqual([
      ["/v1/chat/completions/_t/t3", ["compute"]],
      ["/v1/chat/completions/_t/t3/upto", ["compute"]],
    ]);
    expect(guarded.every(isGuarded)).toBe(true);
    const answer = await modelsRoute(config.inference).handler(
      new Request("http://x/v1/models"),
      undefined as never,
    );
    const models = (await answer.json()) as {
      data: { alias: string; engine: string | null; id: string }[];
    };
    expect(models.data.find((m) => m.alias === "t3")).toMatchObject({ engine: "gguf", id: "small" });
  });

  it("says in its OpenAPI document what a streaming buyer is charged, when, and where the receipt is", () => {
    const merchant = inferenceMerchant(
      { payTo: "0x1111111111111111111111111111111111111111", publicUrl: "x" },
      OFFLINE_SETTINGS,
    );
    const doc = openApiDocument(merchant, loadConfig({ env: {} }).payments);
    const ok = (path: string) => doc.paths[path]?.post?.responses["200"]?.description ?? "";
    for (const path of ["/v1/chat/completions/_t/t2", "/v1/chat/completions/_t/t2/upto"]) {
      expect(ok(path)).toMatch(/settled once the stream has ended/);
      expect(ok(path)).toMatch(/`payment_response`/);
    }
    expect(ok("/v1/chat/completions/_t/t2")).toMatch(/its price when the stream completes/);
    expect(ok("/v1/chat/completions/_t/t2/upto")).toMatch(/for what was delivered/);
  });

  it("is the inference host of MERCHANTS, with /v1/models and /v1/audio/voices free", () => {
    const merchant = MERCHANTS.inference(
      { payTo: "0x1111111111111111111111111111111111111111", publicUrl: "http://127.0.0.1:8407" },
      loadConfig({ env: {} }),
    );
    expect(merchant.name).toBe("inference");
    expect(merchant.free?.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /v1/models",
      "GET /v1/audio/voices",
    ]);
    expect(
      inferenceMerchant(
        { payTo: "0x1111111111111111111111111111111111111111", publicUrl: "x" },
        OFFLINE_SETTINGS,
      ).endpoints,
    ).toHaveLength(23 + 2); // the chat routes, speech and transcriptions
  });

  it("lists every route in /v1/models: alias, model, prices, rates and limits", async () => {
    const route = modelsRoute();
    const body = (await (
      await route.handler(new Request("http://127.0.0.1/v1/models"), undefined as never)
    ).json()) as {
      object: string;
      data: Record<string, unknown>[];
    };
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.alias)).toEqual(["default", ...ALIASES]);
    expect(body.data[0]).toMatchObject({
      id: "offline-default",
      object: "model",
      tier: null,
      path: "/v1/chat/completions",
      price_usd: SPEC_DEFAULT_PRICE,
      upto: null,
      engine: "offline",
    });
    const t5 = body.data.find((m) => m.alias === "t5");
    expect(t5).toMatchObject({
      id: "offline-t5",
      tier: 5,
      path: "/v1/chat/completions/_t/t5",
      price_usd: "0.005783",
      // The maximum is the rates times the largest call: 33,259 x 1.1566 + 1,024 x 4.6264 = 43,205 units.
      upto: {
        path: "/v1/chat/completions/_t/t5/upto",
        max_price_usd: "0.043205",
        covers: { max_tokens: 2048, prompt_tokens: 33_259, at_max_tokens: 1024 },
      },
      rates: { input_usd_per_million_tokens: "1.1566", output_usd_per_million_tokens: "4.6264" },
      limits: { max_tokens: { min: 512, max: 2048, default: 1024 } },
      constraints: "max_tokens 512-2048, default 1024",
    });
    expect(body.data.find((m) => m.alias === "t12")).toMatchObject({
      limits: { max_tokens: { max: 1024 }, input_characters: 36_000 },
    });
    expect(body.data.find((m) => m.alias === "t14")).toMatchObject({
      limits: { max_tokens: { max: 2048 }, message_characters: 12_000 },
    });
    expect(body.data.find((m) => m.alias === "t8")).toMatchObject({
      limits: { max_tokens: { min: 512, max: 4096, default: 4096 }, reasoning_tokens_count_as_output: true },
    });
  });

  it("derives the offline rates from the price: 1,000 input and 1,000 output tokens cost the per-call price", () => {
    expect(defaultRates(TIERS[0] as (typeof TIERS)[0])).toEqual({
      inputPerMillion: "0.4",
      outputPerMillion: "1.6",
    });
    for (const t of TIERS) {
      const r = defaultRates(t);
      const cost = (Number(r.inputPerMillion) * 1000 + Number(r.outputPerMillion) * 1000) / 1e6;
      expect(cost).toBeCloseTo(Number(t.price), 9);
    }
  });
});

describe("the tier constraints, refused before payment by the input schema", () => {
  const t = (alias: string, upto = false) => `/v1/chat/completions/_t/${alias}${upto ? "/upto" : ""}`;

  it("tier 5: max_tokens 512 to 2048, on both routes, under either name", () => {
    for (const path of [t("t5"), t("t5", true)]) {
      expect(refusal(path, { messages: hello, max_tokens: 511 })).toMatch(
        /max_tokens: max_tokens is 512 to 2048/,
      );
      expect(refusal(path, { messages: hello, max_tokens: 2049 })).toMatch(/max_tokens/);
      expect(refusal(path, { messages: hello, max_completion_tokens: 100 })).toMatch(/max_completion_tokens/);
      accepts(path, { messages: hello, max_tokens: 512 });
      accepts(path, { messages: hello, max_tokens: 2048 });
      accepts(path, { messages: hello });
    }
  });

  it("tier 8: max_tokens 512 to 4096", () => {
    for (const path of [t("t8"), t("t8", true)]) {
      expect(refusal(path, { messages: hello, max_tokens: 256 })).toMatch(/512 to 4096/);
      expect(refusal(path, { messages: hello, max_tokens: 4097 })).toMatch(/512 to 4096/);
      accepts(path, { messages: hello, max_tokens: 4096 });
    }
  });

  it("tier 12: input up to 36,000 characters in all, output up to 1024 tokens", () => {
    const half = "x".repeat(18_000);
    accepts(t("t12"), {
      messages: [
        { role: "system", content: half },
        { role: "user", content: half },
      ],
    });
    expect(
      refusal(t("t12"), {
        messages: [
          { role: "system", content: half },
          { role: "user", content: `${half}y` },
        ],
      }),
    ).toMatch(/at most 36000 characters together/);
    expect(refusal(t("t12"), { messages: hello, max_tokens: 1025 })).toMatch(/1 to 1024/);
    accepts(t("t12"), { messages: hello, max_tokens: 1024 });
  });

  it("tier 14: 12,000 characters per message (text parts counted), output up to 2048 tokens", () => {
    const full = "x".repeat(12_000);
    accepts(t("t14"), {
      messages: [
        { role: "user", content: full },
        { role: "assistant", content: full },
      ],
    });
    expect(refusal(t("t14"), { messages: [{ role: "user", content: `${full}y` }] })).toMatch(
      /messages.0.content: a message is at most 12000 characters/,
    );
    expect(
      refusal(t("t14"), {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: full },
              { type: "text", text: "y" },
            ],
          },
        ],
      }),
    ).toMatch(/at most 12000/);
    expect(refusal(t("t14"), { messages: hello, max_tokens: 2049 })).toMatch(/1 to 2048/);
  });

  it("bounds the routes the spec states nothing for (max_tokens 4096, 200,000 characters)", () => {
    expect(refusal("/v1/chat/completions", { messages: hello, max_tokens: 4097 })).toMatch(/1 to 4096/);
    expect(refusal(t("t1"), { messages: [{ role: "user", content: "x".repeat(200_001) }] })).toMatch(
      /200000/,
    );
    expect(refusal(t("t1"), { messages: hello, max_tokens: 0 })).toMatch(/max_tokens/);
  });

  it("refuses what the dialect allows but the route cannot give, and names the parameter", () => {
    const p = "/v1/chat/completions";
    expect(refusal(p, { messages: [] })).toMatch(/^messages:/);
    expect(refusal(p, { messages: hello, model: "gpt-4o" })).toMatch(
      /model: this route serves the model "offline-default"/,
    );
    expect(refusal(p, { messages: hello, n: 2 })).toMatch(/n: n must be 1/);
    expect(refusal(p, { messages: hello, temperature: 2.5 })).toMatch(/temperature/);
    expect(refusal(p, { messages: hello, top_p: 1.5 })).toMatch(/top_p/);
    expect(refusal(p, { messages: hello, stop: ["a", "b", "c", "d", "e"] })).toMatch(/stop/);
    expect(refusal(p, { messages: hello, response_format: { type: "json_schema" } })).toMatch(
      /response_format/,
    );
    expect(refusal(p, { messages: hello, tool_choice: "required" })).toMatch(
      /tool_choice: tool calls are not supported/,
    );
    expect(
      refusal(p, { messages: hello, tool_choice: { type: "function", function: { name: "f" } } }),
    ).toMatch(/tool_choice/);
    expect(refusal(p, { messages: hello, max_tokens: 10, max_completion_tokens: 20 })).toMatch(/differ/);
    expect(refusal(p, { messages: hello, logprobs: true })).toMatch(/logprobs/);
    expect(
      refusal(p, { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] }),
    ).toMatch(/image_url.*text only/);
    expect(refusal(p, { messages: [{ role: "user", content: null }] })).toMatch(/needs content/);
    expect(refusal(p, { messages: [{ role: "robot", content: "hi" }] })).toMatch(/role/);
  });

  it("accepts a full OpenAI request, ignoring what changes nothing here", () => {
    const body = accepts("/v1/chat/completions", {
      model: "offline-default",
      messages: [
        { role: "developer", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Weather?" }], name: "ann" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }],
        },
        { role: "tool", content: "sunny", tool_call_id: "c1" },
      ],
      max_completion_tokens: 50,
      temperature: 0,
      top_p: 1,
      stop: "\n\n",
      stream: true,
      stream_options: { include_usage: true },
      n: 1,
      response_format: { type: "json_object" },
      tools: [{ type: "function", function: { name: "w", parameters: { type: "object" } } }],
      tool_choice: "auto",
      user: "u-1",
      seed: 7,
      presence_penalty: 0,
      max_tokens: null,
    });
    expect(body?.messages).toHaveLength(4);
  });
});

describe("docs/inference.md's table of what each /upto maximum covers", () => {
  it("states each tier's rates, maximum and largest call as the code computes them", () => {
    const doc = readFileSync(new URL("../../../docs/inference.md", import.meta.url), "utf8");
    const rows = doc.split("\n").filter((line) => /^\| \d+ \| `\.\.\.\/t\d+\/upto`/.test(line));
    const expected = TIERS.filter((t) => t.uptoPrice !== null).map((t) => {
      const rates = defaultRates(t);
      const c = meteredCoverage(rates, priceToAtomic(t.uptoPrice ?? "0", 6), t.limits.maxTokens);
      const n = (x: number) => x.toLocaleString("en");
      return `| ${t.number} | \`.../${t.alias}/upto\` | ${t.uptoPrice} | ${rates.inputPerMillion} | ${rates.outputPerMillion} | ${n(c.outputTokens)} | ${n(c.at.promptTokens)} at max_tokens ${n(c.at.maxTokens)} |`;
    });
    expect(rows).toEqual(expected);
  });
});
