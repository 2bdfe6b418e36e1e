/**
 * The secp256k1 work of one paid request, operation by operation (`npm run bench:crypto`): what the x402
 * SDKs do in JavaScript through viem and `@noble/curves` for the buyer's authorization, the facilitator's
 * verification (twice: at verify and again inside the SDK's settle) and the settlement transaction.
 * Each operation runs 30 times to warm up, then `--calls` times (300); the mean is printed. Run through
 * tsx like the service, so the figures include what tsx adds (viem loads noble with a dynamic import on
 * every recovery, and tsx resolves each one).
 */
import os from "node:os";
import { hashTypedData, recoverAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BASE_USDC } from "../src/chain/base.ts";
import { transferWithAuthorizationDigest } from "../src/chain/eip3009.ts";
import { fastAccount, recoverSigner, secp256k1Backend } from "../src/chain/secp256k1.ts";
import { eip3009Types, USDC_EIP712_NAME, USDC_EIP712_VERSION } from "../src/chain/usdc.ts";

const flag = process.argv.indexOf("--calls");
const CALLS = flag > 0 ? Number(process.argv[flag + 1]) : 300;
if (!Number.isSafeInteger(CALLS) || CALLS < 1) throw new Error("use --calls N (a positive integer)");

const account = privateKeyToAccount(generatePrivateKey());
// The exact scheme's EIP-3009 authorization, as the buyer signs it and the facilitator checks it.
const typedData = {
  domain: {
    name: USDC_EIP712_NAME,
    version: USDC_EIP712_VERSION,
    chainId: 8453,
    verifyingContract: BASE_USDC,
  },
  types: eip3009Types,
  primaryType: "TransferWithAuthorization",
  message: {
    from: account.address,
    to: account.address,
    value: 1000n,
    validAfter: 0n,
    validBefore: 9_999_999_999n,
    nonce: `0x${"11".repeat(32)}`,
  },
} as const;

async function mean(fn: () => unknown): Promise<number> {
  for (let i = 0; i < 30; i++) await fn();
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) await fn();
  return (performance.now() - started) / CALLS;
}

/** The settlement transaction, as the facilitator signs it. */
const settlementTx = {
  chainId: 8453,
  type: "eip1559",
  to: BASE_USDC,
  // transferWithAuthorization's calldata: a selector and nine 32-byte words.
  data: `0xe3ee160e${"00".repeat(9 * 32)}`,
  nonce: 1,
  gas: 100_000n,
  maxFeePerGas: 1_000_000_000n,
  maxPriorityFeePerGas: 1_000_000n,
} as const;

const signature = await account.signTypedData(typedData);
const digest = hashTypedData(typedData);
const rows: [string, string, number, number][] = [
  ["signTypedData", "buyer: the authorization", 1, await mean(() => account.signTypedData(typedData))],
  ["hashTypedData", "buyer, verify, settle", 3, await mean(() => hashTypedData(typedData))],
  [
    "recoverAddress",
    "facilitator: verify, and the SDK's check at settle",
    2,
    await mean(() => recoverAddress({ hash: digest, signature })),
  ],
  [
    "signTransaction",
    "facilitator: the settlement",
    1,
    await mean(() => account.signTransaction(settlementTx)),
  ],
];
// The project's facilitator, for the same work (src/chain/secp256k1.ts, src/chain/eip3009.ts).
const fast = fastAccount(generatePrivateKey());
const { message, domain } = typedData;
const projectRows: [string, string, number, number][] = [
  [
    "digest",
    "facilitator: verify, settle",
    2,
    await mean(() => transferWithAuthorizationDigest(domain, message)),
  ],
  ["recoverSigner", "facilitator: verify, settle", 2, await mean(() => recoverSigner(digest, signature))],
  ["signTransaction", "facilitator: the settlement", 1, await mean(() => fast.signTransaction(settlementTx))],
];
const line = (text: string) => process.stdout.write(`${text}\n`);
line(
  `bench:crypto on ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, ${CALLS} calls each`,
);
let total = 0;
for (const [name, where, times, ms] of rows) {
  total += times * ms;
  line(`${name.padEnd(16)} ${ms.toFixed(3)} ms x ${times}   ${where}`);
}
line(`per paid request ${total.toFixed(2)} ms of secp256k1 and EIP-712 work in JavaScript`);
line(`the project's facilitator (secp256k1 by ${secp256k1Backend}):`);
let projectTotal = 0;
for (const [name, where, times, ms] of projectRows) {
  projectTotal += times * ms;
  line(`${name.padEnd(16)} ${ms.toFixed(3)} ms x ${times}   ${where}`);
}
// The buyer's signature is the buyer's in both: only the facilitator's share is compared.
const sdkFacilitator = total - (rows[0]?.[3] ?? 0) - (rows[1]?.[3] ?? 0);
line(
  `facilitator's share per paid request: SDK ${sdkFacilitator.toFixed(2)} ms, project ${projectTotal.toFixed(2)} ms (${(sdkFacilitator / projectTotal).toFixed(0)}x less)`,
);
line(
  JSON.stringify({
    bench: "crypto",
    calls: CALLS,
    ms: Object.fromEntries(rows.map(([n, , t, ms]) => [n, { times: t, ms: Number(ms.toFixed(3)) }])),
    perPaidRequestMs: Number(total.toFixed(2)),
    project: {
      backend: secp256k1Backend,
      ms: Object.fromEntries(projectRows.map(([n, , t, ms]) => [n, { times: t, ms: Number(ms.toFixed(3)) }])),
      facilitatorPerPaidMs: Number(projectTotal.toFixed(3)),
    },
    sdkFacilitatorPerPaidMs: Number(sdkFacilitator.toFixed(2)),
  }),
);
