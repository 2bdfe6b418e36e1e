/**
 * The utility API's OpenAPI document against real answers (test/helpers/openapi-truth.ts): every
 * documented (operation, status) of its page, probe, vectorize and lookup endpoints, each produced over HTTP and
 * checked against what the document says of it. The table is checked whole in openapi-answers.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateIp } from "../../../src/merchants/utility/lookup/geo-engine.ts";
import { checkOperation } from "../../helpers/openapi-truth.ts";
import { startUtilityTruth, UTILITY_GROUPS, type UtilityTruth } from "./openapi-cases.ts";

let truth: UtilityTruth;

beforeAll(async () => {
  // A wallet for each guarded route's unpaid 5xx cases (the page routes are `compute`, as vectorize is
  // `upstream`), so the shared one is never refused for them.
  truth = await startUtilityTruth(16, UTILITY_GROUPS.fetching);
  // The geolocation data (IPv4 and IPv6 apart) takes seconds to load on a busy machine: loaded here,
  // outside /api/geo's 5 s budget.
  await Promise.all([locateIp("8.8.8.8"), locateIp("2001:4860:4860::8888")]);
});
afterAll(async () => {
  await truth?.close();
});

describe("the utility API's document", () => {
  it.concurrent.each(UTILITY_GROUPS.fetching)("%s answers every status it documents", async (key) => {
    expect(await checkOperation(truth.hosts, key, truth.table[key] as never)).toEqual([]);
  });
});
