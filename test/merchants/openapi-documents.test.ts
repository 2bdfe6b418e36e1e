/**
 * Every merchant's OpenAPI document, as its host serves it, against a real OpenAPI 3.1 validator
 * (`@seriousme/openapi-schema-validator`, the OpenAPI Initiative's own schemas), and every example it gives
 * against the schema it illustrates (ajv, JSON Schema 2020-12: OpenAPI 3.1's dialect). Each merchant is
 * built as configuration gives it, and where its document depends on configuration (providers configured
 * or not, another social-data provider, an upstream inference engine) both ways.
 * Whether each documented status is really answered is test/merchants/utility/openapi-*.test.ts's work.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { DEMO_SHOPS, shopMerchant } from "../../src/demo/shops/index.ts";
import type { Merchant } from "../../src/merchant-kit/endpoint.ts";
import { type OpenApiDocument, openApiDocument } from "../../src/merchant-kit/openapi.ts";
import { type HostAddress, MERCHANTS } from "../../src/merchants/index.ts";
import { loadConfig } from "../../src/services/config.ts";

const host: HostAddress = { payTo: `0x${"1".repeat(40)}`, publicUrl: "https://merchant.example" };

/** Every setting that changes a document: each provider and engine configured. */
const CONFIGURED = {
  X402M_LLM_DIALECT: "anthropic",
  X402M_LLM_URL: "https://llm.example",
  X402M_LLM_KEY: "k",
  X402M_LLM_MODEL: "m",
  X402M_SEARCH_BACKEND: "brave",
  X402M_SEARCH_KEY: "k",
  X402M_IMAGE_KEY: "k",
  X402M_VECTORIZER_ID: "id",
  X402M_VECTORIZER_SECRET: "secret",
  X402M_INFERENCE_LLM_URL: "https://inference.example/v1",
  X402M_INFERENCE_TIER_2_MODEL: "upstream-model",
  X402M_INFERENCE_TIER_2_RATES: "1,2",
  X402M_INFERENCE_TIER_3_GGUF: "/models/small.gguf",
  X402M_INFERENCE_AUDIO_URL: "https://audio.example/v1",
};

const merchants: [string, () => Merchant][] = [
  ...Object.entries(MERCHANTS).flatMap(([name, build]): [string, () => Merchant][] => [
    [name, () => build(host, loadConfig({ env: {} }))],
    [`${name}, everything configured`, () => build(host, loadConfig({ env: CONFIGURED }))],
  ]),
  ...["x-web", "twitterapi"].map((provider): [string, () => Merchant] => [
    `social on ${provider}`,
    () =>
      (MERCHANTS.social as (h: HostAddress, c: ReturnType<typeof loadConfig>) => Merchant)(
        host,
        loadConfig({
          env: {
            X402M_SOCIAL_PROVIDER: provider,
            X402M_SOCIAL_X_ACCOUNTS: "token:ct0",
            X402M_SOCIAL_TWITTERAPI_KEY: "key",
          },
        }),
      ),
  ]),
  // Two shops stand for the twenty: one all pure computation, one that refuses input after payment.
  ...DEMO_SHOPS.filter((shop) => ["uuid", "dice"].includes(shop.slug)).map(
    (shop): [string, () => Merchant] => [
      `demo shop ${shop.slug}`,
      () => shopMerchant(shop, host.payTo, `${host.publicUrl}/${shop.slug}`),
    ],
  ),
];

type Operation = OpenApiDocument["paths"][string][string];

/** One validator for every document: building it compiles the OpenAPI schemas (about 2 s). */
const validator = new Validator();

/** Each (where, example, schema) a document gives. */
function examplesOf(doc: OpenApiDocument): { where: string; example: unknown; schema: object }[] {
  const found: { where: string; example: unknown; schema: object }[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops) as [string, Operation][]) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) {
        if (p.example !== undefined)
          found.push({ where: `${at} ${p.name}`, example: p.example, schema: p.schema });
      }
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        // A form's files are shown by name, not as the bytes the schema describes.
        if (type === "application/json")
          found.push({ where: `${at} body`, example: media.example, schema: media.schema });
      }
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (media.example !== undefined)
            found.push({ where: `${at} ${status} ${type}`, example: media.example, schema: media.schema });
        }
      }
    }
  }
  return found;
}

describe.each(merchants)("the OpenAPI document of %s", (_name, merchant) => {
  const doc = openApiDocument(merchant(), loadConfig({ env: {} }).payments);

  it("is valid OpenAPI 3.1", async () => {
    // A copy: the validator resolves references in what it is given.
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("gives examples that match their own schemas", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: "doc", components: doc.components });
    const examples = examplesOf(doc);
    expect(examples.length).toBeGreaterThan(0);
    for (const { where, example, schema } of examples) {
      // The document's own references (#/components/...) read against its components.
      const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
      const validate = ajv.compile(rooted);
      expect(validate(example) ? [] : validate.errors, where).toEqual([]);
    }
  });

  it("says of every refusal when it happens and that it is not charged, in the dialect's shape", () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops) as [string, Operation][]) {
        const paid = op["x-payment-info"] !== undefined;
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          expect(response.description, where).toMatch(/\. Not charged\.$/);
          const schema = response.content?.["application/json"]?.schema;
          expect(JSON.stringify(schema), where).toMatch(
            /#\/components\/schemas\/(Error|OpenAiError)"|maxProperties/,
          );
        }
        if (paid)
          expect(Object.keys(op.responses), `${method} ${path}`).toEqual(
            expect.arrayContaining(["200", "400", "402", "409", "503", "504"]),
          );
      }
    }
  });
});
