/**
 * What a host says of itself to agents (`info.contact`, `info.x-guidance`): the catalogue's guidance and
 * the kit's by default, the operator's contact and paragraph from configuration, refused with the setting's
 * name when invalid, and short enough for agents' tools to read inline whatever the operator writes.
 */
import { describe, expect, it } from "vitest";
import { DEMO_SHOPS, shopMerchant } from "../../src/demo/shops/index.ts";
import type { Merchant } from "../../src/merchant-kit/endpoint.ts";
import { hostInfo, hostInfoSettings } from "../../src/merchant-kit/host-info.ts";
import { openApiDocument } from "../../src/merchant-kit/openapi.ts";
import { MAX_GUIDANCE_CHARS } from "../../src/merchant-kit/settings.ts";
import { MERCHANTS } from "../../src/merchants/index.ts";
import { INFERENCE_GUIDANCE } from "../../src/merchants/inference/guidance.ts";
import { UTILITY_GUIDANCE } from "../../src/merchants/utility/guidance.ts";
import { loadConfig } from "../../src/services/config.ts";

const host = { payTo: `0x${"1".repeat(40)}` as const, publicUrl: "https://merchant.example" };

/** `@agentcash/discovery` warns of guidance past this (L4_GUIDANCE_TOO_LONG). */
const INLINE_LIMIT = 4000;

function merchantsOf(env: Record<string, string> = {}): [string, Merchant][] {
  const config = loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline", ...env } });
  return [
    ...Object.entries(MERCHANTS).map(([name, build]): [string, Merchant] => [name, build(host, config)]),
    ...DEMO_SHOPS.map((shop): [string, Merchant] => [
      `shop ${shop.slug}`,
      shopMerchant(shop, host.payTo, `${host.publicUrl}/${shop.slug}`),
    ]),
  ];
}

describe("a host's contact and guidance", () => {
  const payments = loadConfig({ env: {} }).payments;

  it("default to the catalogue's paragraph, the kit's, and the host's reference page as its contact", () => {
    const utility = MERCHANTS.utility(host, loadConfig({ env: {} }));
    const info = hostInfo(utility, payments);
    expect(info.contact).toEqual({ url: "https://merchant.example/docs" });
    const paragraphs = info.guidance.split("\n\n");
    expect(paragraphs[0]).toBe(UTILITY_GUIDANCE);
    expect(paragraphs[1]).toMatch(/^Paying: .*PAYMENT-REQUIRED.*PAYMENT-SIGNATURE.*PAYMENT-RESPONSE/);
    // The utility API offers no metered call: its guidance does not speak of one.
    expect(paragraphs[1]).not.toContain("upto");
    expect(paragraphs[2]).toContain("https://merchant.example/openapi.json");
    expect(paragraphs[2]).toContain("https://merchant.example/mcp");
    expect(paragraphs).toHaveLength(3);
    const inference = hostInfo(MERCHANTS.inference(host, loadConfig({ env: {} })), payments);
    expect(inference.guidance.startsWith(INFERENCE_GUIDANCE)).toBe(true);
    expect(inference.paying).toContain("Metered operations (price mode dynamic, x402 scheme upto)");
    expect(inference.paying).toContain("Operations without x-payment-info are free");
  });

  it("come from configuration: the operator's contact for every host, a host's own paragraph for it alone", () => {
    const config = loadConfig({
      env: {
        X402M_CONTACT_EMAIL: "ops@merchant.example",
        X402M_CONTACT_URL: "https://merchant.example/contact",
        X402M_INFERENCE_GUIDANCE: "  Ask /v1/models first.  ",
      },
    });
    const inference = MERCHANTS.inference(host, config);
    const doc = openApiDocument(
      inference,
      config.payments,
      hostInfo(inference, config.payments, hostInfoSettings(config, "inference")),
    );
    expect(doc.info.contact).toEqual({
      email: "ops@merchant.example",
      url: "https://merchant.example/contact",
    });
    expect(doc.info["x-guidance"].split("\n\n")[0]).toBe("Ask /v1/models first.");
    expect(doc.info["x-guidance"]).not.toContain(INFERENCE_GUIDANCE);
    const utility = MERCHANTS.utility(host, config);
    const other = hostInfo(utility, config.payments, hostInfoSettings(config, "utility"));
    expect(other.contact.email).toBe("ops@merchant.example");
    expect(other.guidance.startsWith(UTILITY_GUIDANCE)).toBe(true);
  });

  it.each([
    ["X402M_CONTACT_EMAIL", "not an address"],
    ["X402M_CONTACT_URL", "ftp://merchant.example"],
    ["X402M_SOCIAL_PROXY_GUIDANCE", "x".repeat(MAX_GUIDANCE_CHARS + 1)],
  ])("refuses a bad %s, naming it", (name, value) => {
    expect(() => loadConfig({ env: { [name]: value } })).toThrow(new RegExp(`^invalid ${name}: `));
  });

  it.each(merchantsOf())("of %s is every host's own, and short enough to read inline", (_name, merchant) => {
    expect(merchant.guidance?.length ?? 0).toBeGreaterThan(100);
    expect(hostInfo(merchant, payments).guidance.length).toBeLessThan(INLINE_LIMIT);
  });

  it("stays short enough to read inline with the longest paragraph an operator may write", () => {
    const longest = "x".repeat(MAX_GUIDANCE_CHARS);
    const env = Object.fromEntries(
      ["UTILITY", "UTILITY_ALIAS", "INFERENCE", "SOCIAL", "SOCIAL_PROXY"].map((h) => [
        `X402M_${h}_GUIDANCE`,
        longest,
      ]),
    );
    const config = loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline", ...env } });
    for (const [name, build] of Object.entries(MERCHANTS)) {
      const info = hostInfo(build(host, config), config.payments, hostInfoSettings(config, name));
      expect(info.own, name).toBe(longest);
      expect(info.guidance.length, name).toBeLessThan(INLINE_LIMIT);
    }
  });
});
