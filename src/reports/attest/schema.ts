/**
 * What a week's attestation on Base says, and the `attestation` field a report of an attested week carries
 * (issue 55, item 3): the EAS schema the project registers, its data encoded and decoded, and the proof
 * that takes one report to the attested root (tree.ts).
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
import { schemaUid } from "../../chain/eas/index.ts";

/**
 * The week: its blocks (start_block exclusive, as a report's window), the methodology version its figures
 * were built under, the Merkle root over every merchant's report, how many reports that is, the keccak256 of
 * its flag feed (`feedHash`) and where the reports are published.
 */
export const WEEK_SCHEMA =
  "uint64 startBlock,uint64 endBlock,string methodology,bytes32 reportsRoot,uint32 reports,bytes32 feedHash,string publicUrl";

/** No resolver contract: EAS alone records the attestation. */
export const WEEK_SCHEMA_RESOLVER: Address = zeroAddress;
export const WEEK_SCHEMA_REVOCABLE = false;

/** The schema's UID, the same on every chain (the registry derives it from the schema, resolver and revocability). */
export const WEEK_SCHEMA_UID: Hex = schemaUid(WEEK_SCHEMA, WEEK_SCHEMA_RESOLVER, WEEK_SCHEMA_REVOCABLE);

const PARAMETERS = parseAbiParameters(WEEK_SCHEMA);

export interface WeekStatement {
  startBlock: number;
  endBlock: number;
  methodology: string;
  reportsRoot: Hex;
  reports: number;
  feedHash: Hex;
  publicUrl: string;
}

/** The attestation's `data`. */
export function encodeWeek(week: WeekStatement): Hex {
  return encodeAbiParameters(PARAMETERS, [
    BigInt(week.startBlock),
    BigInt(week.endBlock),
    week.methodology,
    week.reportsRoot,
    week.reports,
    week.feedHash,
    week.publicUrl,
  ]);
}

/** An attestation's `data` as the week it states; throws when it is not data of this schema. */
export function decodeWeek(data: Hex): WeekStatement {
  const [startBlock, endBlock, methodology, reportsRoot, reports, feedHash, publicUrl] = decodeAbiParameters(
    PARAMETERS,
    data,
  );
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
