/**
 * What a week's attestation on Base says, and the `attestation` field a report of an attested week carries
 * (issue 55, item 3): the EAS schemas the project registers (Base's weeks, and other chains' weeks naming their
 * chain), their data encoded and decoded, and the proof that takes one report to the attested root (tree.ts).
 *
 * The schema is not revocable: an attested week is never withdrawn, only followed by later weeks, so that
 * nobody (the operator included) can quietly rewrite what a week said. A mistake is corrected in the open,
 * by a new methodology version and the weeks after it.
 */
import {
  type Address,
  decodeAbiParameters,
  encodeAbiParameters,
  type Hex,
  parseAbiParameters,
  zeroAddress,
} from "viem";
import { type AnyChainRecord, BASE_RECORD } from "../../chain/chains.ts";
import { schemaUid } from "../../chain/eas/index.ts";

/**
 * The week: its blocks (start_block exclusive, as a report's window), the methodology version its figures
 * were built under, the Merkle root over every merchant's report, how many reports that is, the keccak256 of
 * its flag feed (`feedHash`) and where the reports are published. Base's weeks, as attested since issue 55.
 */
export const WEEK_SCHEMA =
  "uint64 startBlock,uint64 endBlock,string methodology,bytes32 reportsRoot,uint32 reports,bytes32 feedHash,string publicUrl";

/**
 * Another chain's week (issue 67, item 5): the same fields after the chain whose blocks they are, by its CAIP-2
 * id (`eip155:137`). Attested on Base like Base's weeks, so that a reader finds every chain's weeks in one place;
 * the chain is stated, not implied, so that a Polygon week's blocks are never read as Base's (an EAS search by
 * schema tells them apart, and `verify` holds a report's chain to it). Base's weeks keep WEEK_SCHEMA: their
 * attestations, and every Base report's `attestation.schema`, stay what they were.
 */
export const CHAIN_WEEK_SCHEMA = `string chain,${WEEK_SCHEMA}`;

/** No resolver contract: EAS alone records the attestation. */
export const WEEK_SCHEMA_RESOLVER: Address = zeroAddress;
export const WEEK_SCHEMA_REVOCABLE = false;

/** The schema's UID, the same on every chain (the registry derives it from the schema, resolver and revocability). */
export const WEEK_SCHEMA_UID: Hex = schemaUid(WEEK_SCHEMA, WEEK_SCHEMA_RESOLVER, WEEK_SCHEMA_REVOCABLE);
export const CHAIN_WEEK_SCHEMA_UID: Hex = schemaUid(
  CHAIN_WEEK_SCHEMA,
  WEEK_SCHEMA_RESOLVER,
  WEEK_SCHEMA_REVOCABLE,
);

const PARAMETERS = parseAbiParameters(WEEK_SCHEMA);
const CHAIN_PARAMETERS = parseAbiParameters(CHAIN_WEEK_SCHEMA);

export interface WeekStatement {
  /** The chain whose week it is, by CAIP-2 id; undefined under WEEK_SCHEMA, whose weeks are Base's. */
  chain?: string;
  startBlock: number;
  endBlock: number;
  methodology: string;
  reportsRoot: Hex;
  reports: number;
  feedHash: Hex;
  publicUrl: string;
}

/** The schema a chain's weeks are attested under: Base's own, every other chain's with its id. */
export function weekSchemaOf(chain: Pick<AnyChainRecord, "slug" | "caip2">): {
  schema: string;
  uid: Hex;
  chain?: string;
} {
  return chain.slug === BASE_RECORD.slug
    ? { schema: WEEK_SCHEMA, uid: WEEK_SCHEMA_UID }
    : { schema: CHAIN_WEEK_SCHEMA, uid: CHAIN_WEEK_SCHEMA_UID, chain: chain.caip2 };
}

/** The attestation's `data`: under CHAIN_WEEK_SCHEMA when the week names its chain, else WEEK_SCHEMA. */
export function encodeWeek(week: WeekStatement): Hex {
  const fields = [
    BigInt(week.startBlock),
    BigInt(week.endBlock),
    week.methodology,
    week.reportsRoot,
    week.reports,
    week.feedHash,
    week.publicUrl,
  ] as const;
  return week.chain === undefined
    ? encodeAbiParameters(PARAMETERS, fields)
    : encodeAbiParameters(CHAIN_PARAMETERS, [week.chain, ...fields]);
}

/**
 * An attestation's `data` as the week it states, under the schema `schemaUid` (WEEK_SCHEMA's by default);
 * throws when it is not data of that schema.
 */
export function decodeWeek(data: Hex, schemaUid: Hex = WEEK_SCHEMA_UID): WeekStatement {
  if (schemaUid === CHAIN_WEEK_SCHEMA_UID) {
    const [chain, ...rest] = decodeAbiParameters(CHAIN_PARAMETERS, data);
    return { chain, ...statement(rest) };
  }
  if (schemaUid !== WEEK_SCHEMA_UID) throw new Error(`not a week schema: ${schemaUid}`);
  return statement(decodeAbiParameters(PARAMETERS, data));
}

function statement([startBlock, endBlock, methodology, reportsRoot, reports, feedHash, publicUrl]: readonly [
  bigint,
  bigint,
  string,
  Hex,
  number,
  Hex,
  string,
]): WeekStatement {
  return {
    startBlock: Number(startBlock),
    endBlock: Number(endBlock),
    methodology,
    reportsRoot,
    reports,
    feedHash,
    publicUrl,
  };
}
