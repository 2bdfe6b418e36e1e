import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Database, migrate } from "../../src/common/db/index.ts";
import { type BazaarOutcome, bazaarRecorder, recordInBazaar } from "../../src/facilitator/bazaar.ts";
import {
  bazaarValidationStats,
  clearBazaarValidationCache,
  MAX_SCHEMA_BYTES,
  validateBazaarExtension,
} from "../../src/facilitator/bazaar-extension.ts";
import { FACILITATOR_MIGRATIONS } from "../../src/facilitator/index.ts";
import { countingDatabase, DATABASE_KINDS, openTestDatabase } from "../helpers/db.ts";
import { bazaarGet, newMerchant, requirementsFor } from "../helpers/x402.ts";

type Extension = { info: { input: Record<string, unknown> }; schema: Record<string, unknown> };

/** A settled v2 payment's payload for `url` carrying `bazaar` (the signature is not looked at here). */
function paymentFor(url: string, bazaar: unknown, requirements: PaymentRequirements): PaymentPayload {
  return { x402Version: 2, resource: { url }, accepted: requirements, payload: {}, extensions: { bazaar } };
}

/** The SDK's GET extension (schema and info), as a resource server enriched it. */
function getExtension(example: Record<string, unknown> = { city: "Lisbon" }): Extension {
  return structuredClone(bazaarGet(example).bazaar) as unknown as Extension;
}

/** A hand-written extension: `info` of a GET route whose query `n` the schema types as `nType`. */
function withQuerySchema(nType: string, n: unknown, extra: Record<string, unknown> = {}): Extension {
  return {
    info: { input: { type: "http", method: "GET", queryParams: { n } } },
    schema: {
      ...extra,
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        input: {
          type: "object",
          properties: {
            type: { const: "http" },
            queryParams: { type: "object", properties: { n: { type: nType } }, required: ["n"] },
          },
          required: ["type"],
        },
      },
      required: ["input"],
    },
  };
}

describe.each(DATABASE_KINDS)("Bazaar extension validation (%s)", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  const requirements = requirementsFor(newMerchant());
  let urls = 0;

  beforeAll(async () => {
    ({ db, close } = await openTestDatabase(kind));
    await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);
  });
  afterAll(async () => {
    await close?.();
  });
  beforeEach(() => clearBazaarValidationCache());

  /** Records a payment for a new resource URL in the Bazaar; returns the outcome and whether the URL is listed. */
  async function settle(bazaar: unknown): Promise<{ outcome: BazaarOutcome | undefined; listed: boolean }> {
    const url = `http://shop-${++urls}.test/r`;
    const outcome = await recordInBazaar(db, paymentFor(url, bazaar, requirements), requirements);
    const rows = await db.query("SELECT 1 FROM bazaar_resources WHERE resource = $1", [url]);
    return { outcome, listed: rows.rows.length === 1 };
  }

  it("lists a valid extension", async () => {
    expect(await settle(getExtension())).toEqual({ outcome: { status: "success" }, listed: true });
    const mcp = declareDiscoveryExtension({
      toolName: "lookup",
      inputSchema: { type: "object", properties: { word: { type: "string" } } },
    });
    expect(await settle(mcp.bazaar)).toEqual({ outcome: { status: "success" }, listed: true });
  });

  it("rejects an extension whose info violates its schema, and does not list it", async () => {
    const broken = getExtension();
    broken.info.input.method = "BREW";
    const { outcome, listed } = await settle(broken);
    expect(listed).toBe(false);
    expect(outcome).toMatchObject({ status: "rejected" });
    expect((outcome as { rejectedReason: string }).rejectedReason).toMatch(
      /^the bazaar extension failed validation: \/input\/method: /,
    );
    expect((await settle(withQuerySchema("number", "seven"))).outcome).toMatchObject({ status: "rejected" });
    // No schema at all, or a schema that does not compile.
    expect((await settle({ info: getExtension().info })).outcome).toMatchObject({ status: "rejected" });
    expect((await settle({ ...getExtension(), schema: { type: 12 } })).outcome).toMatchObject({
      status: "rejected",
    });
  });

  it("compiles the same schema once, whatever its key order", async () => {
    const before = bazaarValidationStats().compilations;
    expect((await settle(getExtension({ city: "Lisbon" }))).outcome).toEqual({ status: "success" });
    expect((await settle(getExtension({ city: "Porto" }))).outcome).toEqual({ status: "success" });
    const reordered = getExtension();
    reordered.schema = Object.fromEntries(Object.entries(reordered.schema).reverse());
    expect((await settle(reordered)).outcome).toEqual({ status: "success" });
    expect(bazaarValidationStats().compilations - before).toBe(1);
    // An invalid info against a cached schema: still no new compilation.
    const broken = getExtension();
    broken.info.input.method = "BREW";
    expect((await settle(broken)).outcome).toMatchObject({ status: "rejected" });
    expect(bazaarValidationStats()).toMatchObject({ compilations: before + 1, cached: 1 });
    // A different schema is compiled.
    expect((await settle(withQuerySchema("number", 7))).outcome).toEqual({ status: "success" });
    expect(bazaarValidationStats()).toMatchObject({ compilations: before + 2, cached: 2 });
  });

  it("validates two schemas with the same $id each against its own body", async () => {
    // "#" is the only $id the SDK's rules and the 2020-12 meta-schema both allow (local, no fragment).
    const id = { $id: "#" };
    expect((await settle(withQuerySchema("number", 7, id))).outcome).toEqual({ status: "success" });
    expect((await settle(withQuerySchema("string", 7, id))).outcome).toMatchObject({ status: "rejected" });
    expect((await settle(withQuerySchema("string", "seven", id))).outcome).toEqual({ status: "success" });
    expect((await settle(withQuerySchema("number", "seven", id))).outcome).toMatchObject({
      status: "rejected",
    });
    expect(bazaarValidationStats().cached).toBe(2);
  });

  it("rejects a remote $ref or $id without compiling it", async () => {
    const before = bazaarValidationStats().compilations;
    const remote = withQuerySchema("number", 7);
    (remote.schema.properties as Record<string, unknown>).input = {
      $ref: "https://schemas.evil.test/input.json",
    };
    const { outcome, listed } = await settle(remote);
    expect(listed).toBe(false);
    expect(outcome).toEqual({
      status: "rejected",
      rejectedReason:
        "the bazaar extension failed validation: schema must not contain external $ref/$id references",
    });
    const remoteId = withQuerySchema("number", 7, { $id: "https://schemas.evil.test/root.json" });
    expect((await settle(remoteId)).outcome).toMatchObject({ status: "rejected" });
    // A local $ref is fine.
    const local = withQuerySchema("number", 7, { $defs: { n: { type: "number" } } });
    const input = (local.schema.properties as { input: { properties: Record<string, unknown> } }).input;
    input.properties.queryParams = { type: "object", properties: { n: { $ref: "#/$defs/n" } } };
    expect((await settle(local)).outcome).toEqual({ status: "success" });
    expect(bazaarValidationStats().compilations - before).toBe(1);
  });

  it("rejects a schema larger than the limit without compiling it", async () => {
    const before = bazaarValidationStats().compilations;
    const huge = withQuerySchema("number", 7, { description: "x".repeat(MAX_SCHEMA_BYTES) });
    expect((await settle(huge)).outcome).toMatchObject({
      status: "rejected",
      rejectedReason: expect.stringMatching(/larger than 65536 bytes/),
    });
    expect(bazaarValidationStats().compilations).toBe(before);
  });

  it("groups concurrent settlements' writes and counts every payment, the latest content kept", async () => {
    const url = `http://shop-${++urls}.test/r`;
    const other = `http://shop-${++urls}.test/r`;
    const otherRequirements = requirementsFor(newMerchant());
    const { db: counting, counts } = countingDatabase(db);
    const recorder = bazaarRecorder(counting);
    const cities = Array.from({ length: 20 }, (_, i) => `city ${i}`);
    const outcomes = await Promise.all([
      ...cities.map((city) =>
        recorder.record(paymentFor(url, getExtension({ city }), requirements), requirements),
      ),
      ...[1, 2, 3].map(() =>
        recorder.record(paymentFor(other, getExtension(), otherRequirements), otherRequirements),
      ),
    ]);
    expect(outcomes.every((o) => o?.status === "success")).toBe(true);
    // The 23 writes of one turn, together: one statement, the resources and their accepts (new ones too,
    // which the accepts' foreign key needs written first).
    expect(counts.commits).toBe(1);
    expect(counts.statements).toHaveLength(1);
    const { rows } = await db.query<{ resource: string; payments: bigint; extensions: unknown }>(
      "SELECT resource, payments, extensions FROM bazaar_resources WHERE resource IN ($1, $2) ORDER BY resource",
      [url, other],
    );
    expect(rows.map((r) => [r.resource, r.payments])).toEqual([
      [url, 20n],
      [other, 3n],
    ]);
    // The last payment's example, as twenty writes one after another would have left it.
    expect(JSON.stringify(rows[0]?.extensions)).toContain("city 19");
    const accepts = await db.query("SELECT pay_to FROM bazaar_accepts WHERE resource IN ($1, $2)", [
      url,
      other,
    ]);
    expect(accepts.rows).toHaveLength(2);
    // One at a time: one transaction each, and the count goes on.
    await recorder.record(paymentFor(url, getExtension(), requirements), requirements);
    expect(counts.commits).toBe(2);
    expect(counts.statements).toHaveLength(2);
    const after = await db.query<{ payments: bigint }>(
      "SELECT payments FROM bazaar_resources WHERE resource = $1",
      [url],
    );
    expect(after.rows[0]?.payments).toBe(21n);
  });
});

describe("validateBazaarExtension", () => {
  it("keeps at most 256 compiled schemas", () => {
    clearBazaarValidationCache();
    for (let i = 0; i < 300; i++) {
      expect(validateBazaarExtension({ schema: { type: "object", title: `s${i}` }, info: {} })).toEqual({
        valid: true,
      });
    }
    expect(bazaarValidationStats().cached).toBe(256);
  });

  it("refuses a pattern that repeats an ambiguous group before compiling it, and keeps ordinary patterns", () => {
    // `^(a+)+$` against thirty `a`s and a `!`: seconds of backtracking on the event loop, each two more `a`s
    // four times as long (issue 83). The buyer writes both the schema and the info it is tried on.
    const evil = (pattern: string, key = "q") => ({
      schema: { type: "object", properties: { [key]: { type: "string", pattern } } },
      info: { [key]: `${"a".repeat(30)}!` },
    });
    for (const pattern of ["^(a+)+$", "^(a|aa)*$", "^(\\d{1,3}\\.?)+$", "^((ab)*c)+$", "(x+x+)+y"]) {
      expect(validateBazaarExtension(evil(pattern)), pattern).toEqual({
        valid: false,
        errors: [expect.stringMatching(/repeats a group/)],
      });
    }
    const keyed = {
      schema: { type: "object", patternProperties: { "^(a+)+$": { type: "string" } } },
      info: {},
    };
    expect(validateBazaarExtension(keyed)).toMatchObject({ valid: false });
    for (const pattern of [
      "^[a-z]+$",
      "^(ab)+$",
      "^\\d{4}-\\d{2}-\\d{2}$",
      "^(https?)://[^/]+(/.*)?$",
      "^[(+)]*$",
      "^(a){2}$",
    ]) {
      expect(validateBazaarExtension({ ...evil(pattern), info: {} }), pattern).toEqual({ valid: true });
    }
  });

  it("never throws, even on a schema nested too deep for the stack", () => {
    let schema: Record<string, unknown> = { type: "object" };
    for (let i = 0; i < 20_000; i++) schema = { not: schema };
    expect(validateBazaarExtension({ schema, info: {} })).toMatchObject({ valid: false });
  });
});
