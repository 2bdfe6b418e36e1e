/**
 * EAS on a devnet mined on demand (blockTime 0), as the attestation tests use it: a key's wallet that
 * registers the week schema and attests, each transaction mined at once; the week statement of a set of
 * reports, and those reports with the attestation field that proves them against it.
 */

import {
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  type PublicClient,
  parseEventLogs,
  zeroAddress,
  zeroHash,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import { BASE_CHAIN_ID } from "../../src/chain/base.ts";
import { BASE_RECORD } from "../../src/chain/chains.ts";
import { type Devnet, devnetChain } from "../../src/chain/devnet/index.ts";
import {
  EAS_ADDRESS,
  easAbi,
  SCHEMA_REGISTRY_ADDRESS,
  schemaRegistryAbi,
} from "../../src/chain/eas/index.ts";
import type { AttestationField } from "../../src/reports/attest/field.ts";
import {
  encodeWeek,
  WEEK_SCHEMA,
  WEEK_SCHEMA_RESOLVER,
  WEEK_SCHEMA_UID,
} from "../../src/reports/attest/schema.ts";
import { reportLeaf, weekTree } from "../../src/reports/attest/tree.ts";
import type { Report } from "../../src/reports/schema.ts";

/** `make`'s result, made at the first call: a fixture shared by tests that each run alone too. */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

/** An attestation made: its UID, its transaction and its block's time (ISO, to the second). */
export interface Made {
  uid: Hex;
  tx: Hex;
  time: string;
}

/** The devnet's EAS through the wallet of `key`. */
export function easOn(devnet: Devnet, key: Hex) {
  const account = privateKeyToAccount(key);
  const [chain, transport] = [devnetChain(devnet.rpc), http(devnet.rpc)];
  const wallet = createWalletClient({ account, chain, transport });
  const client = createPublicClient({ chain, transport }) as PublicClient;

  /** Sends a transaction, mines it and returns its receipt, which must be a success. */
  const mined = async (hash: Promise<Hex>) => {
    const h = await hash;
    await devnet.mine();
    const receipt = await client.getTransactionReceipt({ hash: h });
    expect(receipt.status).toBe("success");
    return receipt;
  };

  return {
    client,
    wallet,
    /** The attester's address, lower-case as a report's field writes it. */
    attester: account.address.toLowerCase(),
    mined,
    /** Registers the week schema (or, `revocable`, the same schema revocable: another UID). */
    register: (revocable = false) =>
      mined(
        wallet.writeContract({
          address: SCHEMA_REGISTRY_ADDRESS,
          abi: schemaRegistryAbi,
          functionName: "register",
          args: [WEEK_SCHEMA, WEEK_SCHEMA_RESOLVER, revocable],
        }),
      ),
    /** Attests `data` under `schema` (default the week schema). */
    async attest(data: Hex, schema: Hex = WEEK_SCHEMA_UID): Promise<Made> {
      const request = {
        schema,
        data: {
          recipient: zeroAddress,
          expirationTime: 0n,
          revocable: false,
          refUID: zeroHash,
          data,
          value: 0n,
        },
      };
      const receipt = await mined(
        wallet.writeContract({ address: EAS_ADDRESS, abi: easAbi, functionName: "attest", args: [request] }),
      );
      const [attested] = parseEventLogs({ abi: easAbi, eventName: "Attested", logs: receipt.logs });
      const block = await client.getBlock({ blockNumber: receipt.blockNumber });
      const time = new Date(Number(block.timestamp) * 1000).toISOString().replace(".000Z", "Z");
      return { uid: attested?.args.uid as Hex, tx: receipt.transactionHash, time };
    },
  };
}

/** The week statement (the attestation's data) of `reports` under `root`. */
export function statementOf(reports: readonly Report[], root: Hex, feedHash: Hex = zeroHash): Hex {
  const [first] = reports as [Report];
  return encodeWeek({
    startBlock: first.window.start_block,
    endBlock: first.window.end_block,
    methodology: first.methodology.version,
    reportsRoot: root,
    reports: reports.length,
    feedHash,
    publicUrl: "https://x402-merchants.example",
  });
}

export type Attested = Report & { attestation: AttestationField };

/** The week's tree over `reports`, and the statement to attest of it. */
export function weekOf(reports: readonly Report[], feedHash?: Hex) {
  const tree = weekTree(
    reports.map((r) => reportLeaf(r, BASE_RECORD)),
    BASE_RECORD,
  );
  const root = tree.root as Hex;
  return { tree, root, statement: statementOf(reports, root, feedHash) };
}

/** `reports`, each with the attestation field of `made` by `attester` and its proof in `tree`. */
export function withProofs(
  reports: readonly Report[],
  tree: ReturnType<typeof weekTree>,
  made: Made,
  attester: string,
): Attested[] {
  return reports.map((report) => ({
    ...report,
    attestation: {
      chain_id: BASE_CHAIN_ID,
      eas: EAS_ADDRESS.toLowerCase(),
      schema: WEEK_SCHEMA_UID,
      uid: made.uid,
      attester,
      tx: made.tx,
      root: tree.root,
      proof: tree.getProof(reportLeaf(report, BASE_RECORD)),
    },
  }));
}
