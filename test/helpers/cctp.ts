/**
 * Circle's CCTP played on devnets (test/helpers/cctp-stand-ins.sol): stand-ins of its v1 and v2 contracts
 * deployed on a devnet, burns sent by wallets, and the messages carried over to another devnet as Circle's
 * attesters would (v2: given a nonce, an executed fee and a finality), where they mint. Every event is logged as
 * Circle's contracts log it, so the indexer reads them as it reads mainnet's (src/indexer/cctp-logs.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";
import {
  type Abi,
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  type Hex,
  http,
  keccak256,
  pad,
  parseEventLogs,
  type TransactionReceipt,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { COMPILER_SETTINGS } from "../../scripts/contracts.ts";
import type { CctpDeployment } from "../../src/chain/chains.ts";
import { type Devnet, type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { USDC_OWNER_SLOT, usdcAbi } from "../../src/chain/usdc.ts";
import { mineAll, rpc } from "./settle.ts";

const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), "cctp-stand-ins.sol");
const NAMES = [
  "CctpTokenMinter",
  "CctpMessageTransmitterV1",
  "CctpTokenMessengerV1",
  "CctpMessageTransmitterV2",
  "CctpTokenMessengerV2",
] as const;
type Name = (typeof NAMES)[number];
type Compiled = Record<Name, { abi: Abi; bytecode: Hex }>;

let compiled: Compiled | undefined;

/** The stand-ins, compiled once a process with the project's pinned solc and settings (`scripts/contracts.ts`). */
export function standIns(): Compiled {
  if (compiled) return compiled;
  const sourceName = "test/helpers/cctp-stand-ins.sol";
  const input = {
    language: "Solidity",
    sources: { [sourceName]: { content: fs.readFileSync(SOURCE, "utf8") } },
    settings: {
      ...COMPILER_SETTINGS,
      outputSelection: { [sourceName]: { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const problems = (output.errors ?? []).filter((e) => e.severity !== "info");
  if (problems.length > 0) throw new Error(problems.map((e) => e.formattedMessage).join("\n"));
  const out = {} as Compiled;
  for (const name of NAMES) {
    const c = output.contracts[sourceName]?.[name];
    if (!c) throw new Error(`solc returned no ${name}`);
    out[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  }
  compiled = out;
  return out;
}

/** A devnet with CCTP's stand-ins: its domain, the contracts' addresses, and what sends their transactions. */
export interface CctpChain {
  devnet: Devnet;
  domain: number;
  minter: Address;
  v1: { tokenMessenger: Address; messageTransmitter: Address };
  v2: { tokenMessenger: Address; messageTransmitter: Address };
  /** Where v2's fees are minted. */
  feeRecipient: Address;
}

/** The chain record's `cctp` for a devnet's stand-ins: the override the indexer reads them through. */
export const deploymentOf = (chain: CctpChain): CctpDeployment => ({ v1: chain.v1, v2: chain.v2 });

function wallet(devnet: Devnet, from: DevnetAccount) {
  return createWalletClient({
    account: privateKeyToAccount(from.privateKey),
    chain: devnetChain(devnet.rpc, devnet.chainId),
    transport: http(devnet.rpc),
  });
}

/** Sends one call and mines it; throws unless it succeeded. */
async function send(
  devnet: Devnet,
  from: DevnetAccount,
  call: { address: Address; abi: Abi; functionName: string; args: readonly unknown[] },
): Promise<TransactionReceipt> {
  // Simulated first: a revert throws with its reason rather than as a failed transaction.
  await publicClient(devnet).simulateContract({ ...call, account: from.address } as never);
  const hash = await wallet(devnet, from).writeContract({ ...call, gas: 1_000_000n } as never);
  return receiptOf(devnet, hash);
}

const publicClient = (devnet: Devnet) =>
  createPublicClient({ chain: devnetChain(devnet.rpc, devnet.chainId), transport: http(devnet.rpc) });

async function receiptOf(devnet: Devnet, hash: Hex): Promise<TransactionReceipt> {
  await mineAll(devnet, [hash]);
  return publicClient(devnet).getTransactionReceipt({ hash });
}

async function deploy(devnet: Devnet, name: Name, args: readonly unknown[]): Promise<Address> {
  const { abi, bytecode } = standIns()[name];
  const hash = await wallet(devnet, devnet.owner).deployContract({
    abi,
    bytecode,
    args,
    gas: 5_000_000n,
  } as never);
  const receipt = await receiptOf(devnet, hash);
  if (!receipt.contractAddress) throw new Error(`${name} was not deployed`);
  return receipt.contractAddress.toLowerCase() as Address;
}

/**
 * Deploys the stand-ins on `devnet` as CCTP `domain` and makes their minter USDC's owner (its only minter: the
 * devnet funds nothing by mints after this).
 */
export async function deployCctp(devnet: Devnet, domain: number, feeRecipient: Address): Promise<CctpChain> {
  const minter = await deploy(devnet, "CctpTokenMinter", []);
  const t1 = await deploy(devnet, "CctpMessageTransmitterV1", [domain]);
  const m1 = await deploy(devnet, "CctpTokenMessengerV1", [t1, minter, devnet.usdc]);
  const t2 = await deploy(devnet, "CctpMessageTransmitterV2", [domain]);
  const m2 = await deploy(devnet, "CctpTokenMessengerV2", [t2, minter, devnet.usdc, feeRecipient]);
  const { abi } = standIns().CctpTokenMinter;
  for (const m of [m1, m2]) {
    await send(devnet, devnet.owner, { address: minter, abi, functionName: "addMessenger", args: [m] });
  }
  await rpc(devnet.rpc, "anvil_setStorageAt", [
    devnet.usdc,
    toHex(USDC_OWNER_SLOT, { size: 32 }),
    pad(minter),
  ]);
  return {
    devnet,
    domain,
    minter,
    v1: { tokenMessenger: m1, messageTransmitter: t1 },
    v2: { tokenMessenger: m2, messageTransmitter: t2 },
    feeRecipient,
  };
}

/** Each chain's messengers trust the other's, as Circle registers its remote TokenMessengers. */
export async function linkCctp(a: CctpChain, b: CctpChain): Promise<void> {
  for (const [from, to] of [
    [a, b],
    [b, a],
  ] as const) {
    for (const v of ["v1", "v2"] as const) {
      await send(from.devnet, from.devnet.owner, {
        address: from[v].tokenMessenger,
        abi: standIns()[v === "v1" ? "CctpTokenMessengerV1" : "CctpTokenMessengerV2"].abi,
        functionName: "addRemoteTokenMessenger",
        args: [to.domain, pad(to[v].tokenMessenger)],
      });
    }
  }
}

export interface Burn {
  version: 1 | 2;
  receipt: TransactionReceipt;
  /** The message as it left (MessageSent's bytes). */
  message: Hex;
}

/**
 * `from` burns `amount` on `chain` for `recipient` on domain `to`: approves the version's TokenMessenger, which
 * takes the USDC to the minter as it deposits (v2: with `maxFee`, and `hookData` when given).
 */
export async function burn(
  chain: CctpChain,
  from: DevnetAccount,
  order: { version: 1 | 2; amount: bigint; to: number; recipient: Address; maxFee?: bigint; hookData?: Hex },
): Promise<Burn> {
  const { devnet } = chain;
  await send(devnet, from, {
    address: devnet.usdc,
    abi: usdcAbi as Abi,
    functionName: "approve",
    args: [chain[order.version === 1 ? "v1" : "v2"].tokenMessenger, order.amount],
  });
  const recipient = pad(order.recipient);
  const receipt =
    order.version === 1
      ? await send(devnet, from, {
          address: chain.v1.tokenMessenger,
          abi: standIns().CctpTokenMessengerV1.abi,
          functionName: "depositForBurn",
          args: [order.amount, order.to, recipient, devnet.usdc],
        })
      : await send(devnet, from, {
          address: chain.v2.tokenMessenger,
          abi: standIns().CctpTokenMessengerV2.abi,
          functionName: order.hookData ? "depositForBurnWithHook" : "depositForBurn",
          args: [
            order.amount,
            order.to,
            recipient,
            devnet.usdc,
            pad("0x"),
            order.maxFee ?? 0n,
            2000,
            ...(order.hookData ? [order.hookData] : []),
          ],
        });
  if (receipt.status !== "success") throw new Error("the burn failed");
  const sent = parseEventLogs({
    abi: standIns()[order.version === 1 ? "CctpMessageTransmitterV1" : "CctpMessageTransmitterV2"].abi,
    logs: receipt.logs,
    eventName: "MessageSent",
  })[0] as unknown as { args: { message: Hex } } | undefined;
  if (!sent) throw new Error("the burn sent no message");
  return { version: order.version, receipt, message: sent.args.message };
}

/**
 * Carries a burn's message to `chain` and mints there, sent by `relayer`: v1's as it left, v2's as Circle's
 * attesters sign it, with a nonce (from the burn's transaction), the fee they executed and the finality.
 */
export async function mint(
  chain: CctpChain,
  relayer: DevnetAccount,
  b: Burn,
  attested: { fee?: bigint } = {},
): Promise<{ receipt: TransactionReceipt; nonce: string }> {
  let message = b.message;
  let nonce: string;
  if (b.version === 2) {
    const hex = message.slice(2);
    nonce = keccak256(b.receipt.transactionHash);
    const fee = toHex(attested.fee ?? 0n, { size: 32 }).slice(2);
    const finality = toHex(2000, { size: 4 }).slice(2);
    // nonce at byte 12, finalityThresholdExecuted at 144, the body's feeExecuted at 148 + 164.
    message = `0x${hex.slice(0, 24)}${nonce.slice(2)}${hex.slice(88, 288)}${finality}${hex.slice(296, 296 + 328)}${fee}${hex.slice(296 + 392)}`;
  } else {
    nonce = BigInt(`0x${message.slice(2 + 24, 2 + 40)}`).toString();
  }
  const version = b.version === 1 ? "v1" : "v2";
  const receipt = await send(chain.devnet, relayer, {
    address: chain[version].messageTransmitter,
    abi: standIns()[b.version === 1 ? "CctpMessageTransmitterV1" : "CctpMessageTransmitterV2"].abi,
    functionName: "receiveMessage",
    args: [message, "0x"],
  });
  if (receipt.status !== "success") throw new Error("the mint failed");
  return { receipt, nonce };
}

/** The receipt's log of `event` from `address`, decoded by viem with the stand-in's ABI. */
export function eventOf(
  receipt: TransactionReceipt,
  name: Name,
  address: Address,
  eventName: string,
): { logIndex: number; args: Record<string, unknown> } {
  const { abi } = standIns()[name];
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== address.toLowerCase()) continue;
    try {
      const decoded = decodeEventLog({ abi, data: log.data, topics: log.topics });
      if (decoded.eventName === eventName) {
        return { logIndex: log.logIndex, args: decoded.args as unknown as Record<string, unknown> };
      }
    } catch {
      // another event of the contract
    }
  }
  throw new Error(`no ${eventName} of ${address} in ${receipt.transactionHash}`);
}
