/**
 * The utility API's OpenAPI document against real answers (test/helpers/openapi-truth.ts): every
 * documented (operation, status) of its state, data, calc, icon and provider endpoints (a language model,
 * a search backend, an image model: fakes on 127.0.0.1), each produced over HTTP and checked against what
 * the document says of it; the fetching endpoints are openapi-answers-fetching.test.ts's. The table is
 * checked whole here: a documented status without a case, or a case the document does not list, fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkOperation, coverageGaps } from "../../helpers/openapi-truth.ts";
import { startUtilityTruth, UTILITY_GROUPS, type UtilityTruth } from "./openapi-cases.ts";

let truth: UtilityTruth;

beforeAll(async () => {
  truth = await startUtilityTruth(48, [...UTILITY_GROUPS.rest, ...UTILITY_GROUPS.providers]);
});
afterAll(async () => {
  await truth?.close();
});

describe("the utility API's document", () => {
  it("has a case for every status it lists, and lists every status a case gets", () => {
    expect(coverageGaps(truth.hosts.doc, truth.table)).toEqual([]);
    const grouped = Object.values(UTILITY_GROUPS).flat();
    expect([...grouped].sort()).toEqual(Object.keys(truth.table).sort());
  });

  it.concurrent.each(UTILITY_GROUPS.rest)("%s answers every status it documents", async (key) => {
    expect(await checkOperation(truth.hosts, key, truth.table[key] as never)).toEqual([]);
  });
});

// After the others. Each case sets how the fakes answer, so an operation's cases run one at a time, in a turn
// no other operation's share (checkOperation's `sequential`); the tests run side by side so that each one's
// held cases wait out their budget (1.5 s) while the next one's cases run.
describe("the utility API's document, on its providers", () => {
  it.concurrent.each(UTILITY_GROUPS.providers)("%s answers every status it documents", async (key) => {
    const cases = truth.table[key] as never;
    expect(await checkOperation(truth.hosts, key, cases, { sequential: true })).toEqual([]);
  });
});
