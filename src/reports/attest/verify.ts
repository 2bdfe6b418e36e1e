/**
 * Checks a downloaded report against the chain, with nothing but an RPC (issue 55, item 3): that its proof
 * takes it to the root its `attestation` field names, and that EAS on Base holds an attestation of that
 * root, for the report's window and methodology, under the project's week schema of the report's chain (and,
 * for a chain other than Base, naming that chain), made by the attester named, and not revoked.
 * `x402-merchants verify` (src/cli/verify.ts) is this for files; docs/attestation.md says the same steps for
 * anyone who does them by hand or in another language.
 *
 * A report chooses neither the contract that vouches for it (EAS at Base's predeploy, only) nor, when the
 * caller names one, who the attester is: anyone can attest under a public schema, so an attestation proves
 * only what its attester said.
 */
import type { Address, Hex, PublicClient } from "viem";
import { zeroHash } from "viem";
import { z } from "zod";
import { type AnyChainRecord, BASE_RECORD, isSolana, storeChains } from "../../chain/chains.ts";
import { EAS_ADDRESS, easAbi } from "../../chain/eas/index.ts";
import { solanaKeyBytes } from "../../chain/solana/base58.ts";
import { AppError } from "../../common/errors.ts";
import { type AttestationField, AttestationFieldSchema } from "./field.ts";
import { decodeWeek, weekSchemaOf } from "./schema.ts";
import { PROOF_FIELD, provesReport } from "./tree.ts";

/** What a verified report is: whose, which week, and the attestation that vouches for it. */
export interface Verified {
  address: string;
  endBlock: number;
  uid: Hex;
  attester: Address;
  /** When it was attested, ISO 8601 UTC. */
  time: string;
}

export type VerifyFailure =
  | "not_report"
  | "no_attestation"
  | "bad_attestation"
  | "proof"
  | "rpc"
  | "chain"
  | "eas"
  | "not_found"
  | "schema"
  | "attester"
  | "revoked"
  | "expired"
  | "window"
  | "week_chain"
  | "methodology"
  | "root";

/** Why a report does not verify: `code` for callers, the message one line for a reader. */
export class VerifyError extends AppError {
  constructor(
    override readonly code: VerifyFailure,
    message: string,
  ) {
    super(422, code, message);
  }
}

/**
 * What verifying needs of a report, and no more: the rest of it is whatever was attested, which the proof
 * checks (ReportSchema is the served report's, and changes with the report; an attested one must still
 * verify).
 */
const ReportShape = z.looseObject({
  /** Of the report's chain's form (`addressOf`): 0x and 40 hex digits, or on Solana a base58 key. */
  address: z.string().min(1),
  /** The chain whose week it is, by slug; Base's weeks name it too, and every report of a schema version since. */
  chain: z.string().optional(),
  window: z.looseObject({
    start_block: z.number().int().min(0),
    end_block: z.number().int().min(0),
  }),
  methodology: z.looseObject({ version: z.string().min(1) }),
});

type ReportShape = z.infer<typeof ReportShape>;

/**
 * Verifies `report` (a parsed JSON value) against the chain `client` reads, and `options.attester` when
 * given; throws a VerifyError saying why it does not verify.
 */
export async function verifyReport(
  report: unknown,
  client: PublicClient,
  options: { attester?: Address } = {},
): Promise<Verified> {
  const shaped = shapeOf(report);
  const week = weekChainOf(shaped);
  const address = addressOf(shaped, week.record);
  const attestation = attestationOf(shaped);
  // The report as given, every field of it: the leaf is its canonical JSON, in its chain's leaf (tree.ts).
  const whole = report as ReportShape;
  if (!provesReport(attestation.root as Hex, whole, attestation.proof as Hex[], week.record)) {
    throw new VerifyError(
      "proof",
      "the report does not prove against the attested root: a field was changed or it is not the attested report",
    );
  }
  if (attestation.eas !== EAS_ADDRESS.toLowerCase()) {
    throw new VerifyError(
      "eas",
      `the attestation names ${attestation.eas} as EAS, not Base's EAS at ${EAS_ADDRESS}: a report does not choose who vouches for it`,
    );
  }
  const chainId = await rpc(() => client.getChainId(), "rpc", "the RPC did not answer its chain id");
  if (chainId !== attestation.chain_id) {
    throw new VerifyError(
      "chain",
      `the report was attested on chain ${attestation.chain_id}, and the RPC answers for chain ${chainId}`,
    );
  }
  const uid = attestation.uid as Hex;
  // At a block the node has made, not "latest": anvil resolves "latest" twice and refuses a call that meets
  // a block being built as out of range (-32602, foundry-rs/foundry#10709); a demo's attester mines on. A node
  // that keeps no past states (the demo's chain) refuses the block read just before too once the next is
  // mined: the head is read again and the call made once more, twice at most.
  let head = await rpc(
    () => client.getBlockNumber({ cacheTime: 0 }),
    "rpc",
    "the RPC did not answer its latest block",
  );
  const stored = await rpc(
    async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await client.readContract({
            address: EAS_ADDRESS,
            abi: easAbi,
            functionName: "getAttestation",
            args: [uid],
            blockNumber: head,
          });
        } catch (error) {
          const walk = (error as { walk?: (match: (e: unknown) => boolean) => unknown }).walk;
          const outOfRange = walk?.call(error, (e) => (e as { code?: unknown }).code === -32602) != null;
          if (!outOfRange || attempt >= 3) throw error;
          head = await client.getBlockNumber({ cacheTime: 0 });
        }
      }
    },
    "eas",
    `EAS at ${EAS_ADDRESS} on chain ${chainId} did not answer getAttestation`,
  );
  if (stored.uid === zeroHash) {
    throw new VerifyError("not_found", `EAS on chain ${chainId} holds no attestation ${uid}`);
  }
  checkAttestation(stored, attestation, week.uid, options.attester);
  checkWeek(stored.data, shaped, attestation, week);
  return {
    address,
    endBlock: shaped.window.end_block,
    uid,
    attester: stored.attester,
    time: isoTime(stored.time),
  };
}

function shapeOf(report: unknown): ReportShape {
  const parsed = ReportShape.safeParse(report);
  if (parsed.success) return parsed.data;
  if (report === null || typeof report !== "object" || Array.isArray(report)) {
    throw new VerifyError("not_report", "not a report: a report is a JSON object");
  }
  const [issue] = parsed.error.issues;
  const where = issue?.path.join(".") || "the report";
  if (issue?.code === "invalid_type" && issue.message.endsWith("received undefined")) {
    throw new VerifyError("not_report", `not a report: it has no ${where}`);
  }
  throw new VerifyError("not_report", `not a report: ${where}: ${issue?.message ?? "malformed"}`);
}

function attestationOf(report: ReportShape): AttestationField {
  const field = report[PROOF_FIELD];
  if (field === undefined || field === null) {
    throw new VerifyError(
      "no_attestation",
      "the report carries no attestation: its week is not attested (yet)",
    );
  }
  const parsed = AttestationFieldSchema.safeParse(field);
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  const where = [PROOF_FIELD, ...(issue?.path ?? [])].join(".");
  throw new VerifyError(
    "bad_attestation",
    `the report's attestation is malformed: ${where}: ${issue?.message ?? "malformed"} (hex is lower-case)`,
  );
}

/**
 * The report's chain, and the schema its weeks are attested under (schema.ts); a chain this program does not
 * know fails. Solana's weeks too are attested on Base (issue 86, item 4).
 */
function weekChainOf(
  report: ReportShape,
): ReturnType<typeof weekSchemaOf> & { name: string; record: AnyChainRecord } {
  const slug = report.chain ?? BASE_RECORD.slug;
  const chain = storeChains.bySlug.get(slug);
  if (!chain) {
    throw new VerifyError(
      "not_report",
      `not a report of a known chain: "${slug}" (known: ${storeChains.list.map((c) => c.slug).join(", ")})`,
    );
  }
  return { ...weekSchemaOf(chain), name: chain.name, record: chain };
}

/**
 * The report's address as its chain writes it (an EVM address lower-cased, a Solana key as it is: its case is
 * part of it); a report whose address is not of its chain's form fails.
 */
function addressOf(report: ReportShape, chain: AnyChainRecord): string {
  if (isSolana(chain)) {
    if (solanaKeyBytes(report.address)) return report.address;
    throw new VerifyError(
      "not_report",
      `not a report: address: a ${chain.name} key, base58 of 32 bytes, not "${report.address}"`,
    );
  }
  if (/^0x[0-9a-fA-F]{40}$/.test(report.address)) return report.address.toLowerCase();
  throw new VerifyError("not_report", "not a report: address: an address: 0x followed by 40 hex digits");
}

/** A call to the RPC, its failure one line: the RPC is down or no Ethereum node, or no EAS is there. */
async function rpc<T>(call: () => Promise<T>, code: "rpc" | "eas", what: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const said = (error as { shortMessage?: string }).shortMessage ?? String((error as Error).message);
    throw new VerifyError(code, `${what}: ${said.split("\n")[0]}`);
  }
}

interface StoredAttestation {
  uid: Hex;
  schema: Hex;
  time: bigint;
  expirationTime: bigint;
  revocationTime: bigint;
  attester: Address;
  data: Hex;
}

/** Who made the attestation, under which schema, and whether it still stands. */
function checkAttestation(
  stored: StoredAttestation,
  field: AttestationField,
  schema: Hex,
  attester?: Address,
): void {
  const uid = stored.uid;
  if (stored.schema !== schema) {
    throw new VerifyError(
      "schema",
      `attestation ${uid} is under schema ${stored.schema}, not the week schema of the report's chain ${schema}`,
    );
  }
  if (field.schema !== schema) {
    throw new VerifyError(
      "schema",
      `the report names schema ${field.schema}, not the week schema of its chain ${schema}`,
    );
  }
  const by = stored.attester.toLowerCase();
  if (by !== field.attester) {
    throw new VerifyError(
      "attester",
      `attestation ${uid} was made by ${by}, not by ${field.attester} as the report says`,
    );
  }
  if (attester !== undefined && by !== attester.toLowerCase()) {
    throw new VerifyError(
      "attester",
      `attestation ${uid} was made by ${by}, not by ${attester.toLowerCase()}`,
    );
  }
  if (stored.revocationTime !== 0n) {
    throw new VerifyError("revoked", `attestation ${uid} was revoked at ${isoTime(stored.revocationTime)}`);
  }
  if (stored.expirationTime !== 0n && stored.expirationTime * 1000n <= BigInt(Date.now())) {
    throw new VerifyError("expired", `attestation ${uid} expired at ${isoTime(stored.expirationTime)}`);
  }
}

/** What the attestation says of the week against what the report says. */
function checkWeek(
  data: Hex,
  report: ReportShape,
  field: AttestationField,
  schema: ReturnType<typeof weekChainOf>,
): void {
  let week: ReturnType<typeof decodeWeek>;
  try {
    week = decodeWeek(data, schema.uid);
  } catch {
    throw new VerifyError("schema", `attestation ${field.uid} holds data the week schema does not decode`);
  }
  if (week.chain !== schema.chain) {
    throw new VerifyError(
      "week_chain",
      `attestation ${field.uid} is of a week of ${week.chain}, the report's of ${schema.name} (${schema.chain})`,
    );
  }
  const { start_block, end_block } = report.window;
  if (week.startBlock !== start_block || week.endBlock !== end_block) {
    throw new VerifyError(
      "window",
      `the attested week is blocks ${week.startBlock} to ${week.endBlock}, the report's ${start_block} to ${end_block}`,
    );
  }
  if (week.methodology !== report.methodology.version) {
    throw new VerifyError(
      "methodology",
      `the week was attested under methodology ${week.methodology}, the report says ${report.methodology.version}`,
    );
  }
  if (week.reportsRoot.toLowerCase() !== field.root) {
    throw new VerifyError(
      "root",
      `attestation ${field.uid} is of reports root ${week.reportsRoot}, not the root ${field.root} the report proves against`,
    );
  }
}

function isoTime(seconds: bigint): string {
  return new Date(Number(seconds) * 1000).toISOString().replace(".000Z", "Z");
}
