/**
 * A report checked against the chain (src/reports/attest/verify.ts): a week of five reports attested on a
 * devnet as the weekly attester will (the week schema registered, the tree's root attested, each report given
 * its attestation field), then every report verifies, and a changed report, another attestation, another
 * schema, attester, window, methodology or chain each fails with its code. One devnet for the file, mined on
 * demand; the week is made once, by whichever test needs it first, so that each test runs alone too.
 */

import {
  type Address,
  createPublicClient,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  stringToHex,
  zeroAddress,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_RECORD } from "../../../src/chain/chains.ts";
import { type Devnet, startDevnet } from "../../../src/chain/devnet/index.ts";
import { schemaUid } from "../../../src/chain/eas/index.ts";
import type { AttestationField } from "../../../src/reports/attest/field.ts";
import { WEEK_SCHEMA } from "../../../src/reports/attest/schema.ts";
import { reportLeaf, weekTree } from "../../../src/reports/attest/tree.ts";
import { VerifyError, verifyReport } from "../../../src/reports/attest/verify.ts";
import type { Report } from "../../../src/reports/schema.ts";
import { type Attested, easOn, once, statementOf, weekOf, withProofs } from "../../helpers/eas.ts";
import { startRpcProxy } from "../../helpers/rpc-proxy.ts";
import { makeReport, wallet as repeated } from "../fixtures.ts";

/** The same schema made revocable: another UID, data the week schema decodes. */
const OTHER_SCHEMA_UID = schemaUid(WEEK_SCHEMA, zeroAddress, true);
const STRANGER = "0x5555555555555555555555555555555555555555";
const FEED_HASH = keccak256(stringToHex("the week's flag feed"));

let devnet: Devnet;
let eas: ReturnType<typeof easOn>;
let client: PublicClient;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
  eas = easOn(devnet, (devnet.buyers[0] as { privateKey: Hex }).privateKey);
  client = eas.client;
});
afterAll(() => devnet?.stop());

/**
 * The week: five reports, the schemas registered, the week attested under the week schema; also the same
 * statement under the revocable schema, and another root of the same week under the week schema.
 */
const week = once(async () => {
  await eas.register(false);
  await eas.register(true);
  const reports = ["a", "b", "c", "d", "e"].map((digit, i) =>
    makeReport({ address: repeated(digit), name: `m${i}.example`, frozen: true, real_usd: 10 - i }),
  );
  const { tree, statement } = weekOf(reports, FEED_HASH);
  const made = await eas.attest(statement);
  const underOtherSchema = await eas.attest(statement, OTHER_SCHEMA_UID);
  const ofOtherRoot = await eas.attest(
    statementOf(reports, keccak256(stringToHex("another root")), FEED_HASH),
  );
  return { attested: withProofs(reports, tree, made, eas.attester), made, underOtherSchema, ofOtherRoot };
});

/** The first report of the week with its attestation field changed by `change`. */
async function withAttestation(change: Partial<AttestationField>): Promise<Attested> {
  const [report] = (await week()).attested as [Attested];
  return { ...report, attestation: { ...report.attestation, ...change } };
}

/**
 * The week's reports changed by `alter`, each proved against a tree of the changed reports: the first of
 * them, its attestation field naming the week's attestation, and the changed tree's root.
 */
async function reproved(alter: (report: Report) => Report): Promise<{ report: Attested; root: Hex }> {
  const { attested } = await week();
  const altered = attested.map(({ attestation: _, ...report }) => alter(report));
  const tree = weekTree(
    altered.map((r) => reportLeaf(r, BASE_RECORD)),
    BASE_RECORD,
  );
  const [first, field] = [altered[0] as Report, (attested[0] as Attested).attestation];
  const proof = tree.getProof(reportLeaf(first, BASE_RECORD));
  return { report: { ...first, attestation: { ...field, proof } }, root: tree.root as Hex };
}

/** What verifying `report` fails with: its code, and that its message is one line. */
async function failure(report: unknown, options: { attester?: Address } = {}, on = client): Promise<string> {
  const error = await verifyReport(report, on, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(VerifyError);
  const { code, message } = error as VerifyError;
  expect(message).not.toContain("\n");
  return code;
}

describe("verifyReport", () => {
  it("verifies every report of an attested week, by whoever the report names or the attester given", async () => {
    const { attested, made } = await week();
    const attester = eas.wallet.account.address;
    for (const report of attested) {
      const expected = {
        address: report.address,
        endBlock: report.window.end_block,
        uid: made.uid,
        attester,
      };
      expect(await verifyReport(report, client, {})).toEqual({ ...expected, time: made.time });
      // The attester given in any case, as an address is.
      expect(await verifyReport(report, client, { attester })).toMatchObject(expected);
      const lower = attester.toLowerCase() as Address;
      expect(await verifyReport(report, client, { attester: lower })).toMatchObject(expected);
      // As read from a file: the parsed JSON.
      expect(await verifyReport(JSON.parse(JSON.stringify(report)), client)).toMatchObject(expected);
    }
  });

  it("reads again at the new head when the node refuses the block it read as out of range, twice at most", async () => {
    const [report] = (await week()).attested as [Attested];
    // As anvil without past states answers a call at a block the next one replaced (-32602): `refused` times.
    const through = async (refused: number) => {
      let calls = 0;
      const proxy = await startRpcProxy(devnet.rpc, ({ body }) =>
        !Array.isArray(body) && body.method === "eth_call" && calls++ < refused
          ? {
              kind: "rpc-error",
              code: -32602,
              message: "BlockOutOfRangeError: block height is 9 but requested 10",
            }
          : { kind: "forward" },
      );
      try {
        const on = createPublicClient({ transport: http(proxy.url, { retryCount: 0 }) }) as PublicClient;
        return { result: await verifyReport(report, on).catch((e: unknown) => e), calls };
      } finally {
        await proxy.close();
      }
    };
    const twice = await through(2);
    expect(twice.result).toMatchObject({ address: report.address, endBlock: report.window.end_block });
    expect(twice.calls).toBe(3);
    const thrice = await through(3);
    expect(thrice.result).toBeInstanceOf(VerifyError);
    expect((thrice.result as VerifyError).code).toBe("eas");
  });

  it("refuses a report changed by one field: its proof no longer takes it to the root", async () => {
    const [report] = (await week()).attested as [Attested];
    expect(await failure({ ...report, real_usd: report.real_usd + 0.01 })).toBe("proof");
    expect(await failure({ ...report, name: "other.example" })).toBe("proof");
    expect(await failure({ ...report, address: repeated("f") })).toBe("proof");
    expect(await failure({ ...report, extra: true })).toBe("proof");
    // Another report's proof, or a proof of the right report against another root.
    const second = (await week()).attested[1] as Attested;
    expect(await failure({ ...report, attestation: second.attestation })).toBe("proof");
    expect(await failure(await withAttestation({ root: keccak256(stringToHex("x")) }))).toBe("proof");
  });

  it("refuses an attestation that is not there, or is of another root", async () => {
    expect(await failure(await withAttestation({ uid: keccak256(stringToHex("no such attestation")) }))).toBe(
      "not_found",
    );
    expect(await failure(await withAttestation({ uid: (await week()).ofOtherRoot.uid }))).toBe("root");
  });

  it("refuses an attestation under another schema, or a report that names another", async () => {
    expect(await failure(await withAttestation({ uid: (await week()).underOtherSchema.uid }))).toBe("schema");
    expect(await failure(await withAttestation({ schema: OTHER_SCHEMA_UID }))).toBe("schema");
  });

  it("refuses another attester than the one given, or than the report names", async () => {
    const [report] = (await week()).attested as [Attested];
    expect(await failure(report, { attester: STRANGER })).toBe("attester");
    expect(await failure(await withAttestation({ attester: STRANGER }))).toBe("attester");
  });

  it("refuses a report of another window or methodology, proved against a tree of such reports", async () => {
    const otherWindow = (r: Report) => ({ ...r, window: { ...r.window, end_block: r.window.end_block + 1 } });
    const { report, root } = await reproved(otherWindow);
    // Against the attested root its proof fails; against its own tree's root, the attested week is another.
    expect(await failure(report)).toBe("proof");
    expect(await failure({ ...report, attestation: { ...report.attestation, root } })).toBe("window");

    const otherMethodology = (r: Report) => ({ ...r, methodology: { ...r.methodology, version: "9.9.9" } });
    const changed = await reproved(otherMethodology);
    const field = { ...changed.report.attestation, root: changed.root };
    expect(await failure({ ...changed.report, attestation: field })).toBe("methodology");
  });

  it("refuses an attestation on another chain, or at another EAS than Base's", async () => {
    expect(await failure(await withAttestation({ chain_id: 84532 }))).toBe("chain");
    expect(await failure(await withAttestation({ eas: STRANGER }))).toBe("eas");
  });

  it("refuses what is not an attested report, before asking the chain", async () => {
    const [attested] = (await week()).attested as [Attested];
    const { attestation: _, ...report } = attested;
    expect(await failure(report)).toBe("no_attestation");
    expect(await failure({ ...report, attestation: null })).toBe("no_attestation");
    expect(await failure(await withAttestation({ uid: attested.attestation.uid.toUpperCase() }))).toBe(
      "bad_attestation",
    );
    for (const notReport of [null, [], "report", { ...report, address: "0x12" }, { address: report.address }])
      expect(await failure(notReport)).toBe("not_report");
    // An RPC that is not there: said in one line, not retried for long.
    const down = createPublicClient({ transport: http("http://127.0.0.1:1", { retryCount: 0 }) });
    expect(await failure(attested, {}, down as PublicClient)).toBe("rpc");
  });
});
