/**
 * The stock SDK's own facilitator (`@x402/core`'s `x402Facilitator` with `@x402/evm`'s exact, upto and
 * batch-settlement facilitator schemes) on a devnet, as a `FacilitatorClient` the merchant kit pays through,
 * in process. It signs with the devnet's facilitator account, which is also the receiver authorizer its
 * `/supported` names for channels (it signs claims and refunds). Beside the project's own facilitator, it is
 * the peer the issue asks for: the SDK's clients of every scheme we accept pay our merchants through it.
 * Its transactions share one nonce manager, so that concurrent deposits, claims and settlements each get their
 * own nonce; the caller mines (`startMiner`).
 *
 * And the buyer's side: the SDK's batch-settlement client as a wallet pays with it.
 */
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme as BatchClient } from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchFacilitator } from "@x402/evm/batch-settlement/facilitator";
import { ExactEvmScheme as ExactFacilitator } from "@x402/evm/exact/facilitator";
import { UptoEvmScheme as UptoFacilitator } from "@x402/evm/upto/facilitator";
import { createPublicClient, createWalletClient, type Hex, http, pad, publicActions, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createNonceManager, jsonRpc } from "viem/nonce";
import { type Devnet, type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { pollReceipt } from "../../src/chain/receipt.ts";
import { NETWORK } from "./x402.ts";

export interface StockFacilitator extends FacilitatorClient {
  /** Its signer, and the receiver authorizer of the channels paid through it. */
  address: `0x${string}`;
}

export function stockFacilitator(devnet: Devnet): StockFacilitator {
  // A nonce manager of its own: viem's shared one remembers nonces per address and chain id, which every
  // devnet of a test process shares.
  const account = privateKeyToAccount(devnet.facilitatorAccount.privateKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const wallet = createWalletClient({
    account,
    chain: devnetChain(devnet.rpc),
    transport: http(devnet.rpc),
    pollingInterval: 20,
  }).extend(publicActions);
  const reader = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => wallet.readContract(args as Parameters<typeof wallet.readContract>[0]),
    verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0]),
    writeContract: (args) => wallet.writeContract(args as Parameters<typeof wallet.writeContract>[0]),
    sendTransaction: (args) => wallet.sendTransaction(args),
    waitForTransactionReceipt: async ({ hash }) => {
      const receipt = await pollReceipt(reader, hash as Hex, 20_000, 20);
      if (!receipt) throw new Error(`${hash}: no receipt in 20 s`);
      return receipt;
    },
    getCode: (args) => wallet.getCode(args),
  });
  const sdk = new x402Facilitator()
    .register(NETWORK, new ExactFacilitator(signer))
    .register(NETWORK, new UptoFacilitator(signer))
    .register(NETWORK, new BatchFacilitator(signer, account));
  return {
    address: account.address,
    verify: (payload, requirements) => sdk.verify(payload, requirements),
    settle: (payload, requirements) => sdk.settle(payload, requirements),
    getSupported: async () => sdk.getSupported() as Awaited<ReturnType<FacilitatorClient["getSupported"]>>,
  };
}

/**
 * A buyer's SDK batch-settlement client: signs deposits and vouchers, reads its channel on the devnet. `salt`
 * makes a channel of its own (one per test); `deposit`, when set, is what it deposits (at least what the
 * call needs), instead of the server's suggested minimum (ten calls).
 */
export function channelClient(
  devnet: Devnet,
  buyer: DevnetAccount,
  options: { salt?: bigint; deposit?: bigint } = {},
): BatchClient {
  const account = privateKeyToAccount(buyer.privateKey);
  const reader = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
  const { deposit } = options;
  return new BatchClient(
    {
      address: account.address,
      signTypedData: (message) =>
        account.signTypedData(message as Parameters<typeof account.signTypedData>[0]),
      readContract: (args) => reader.readContract(args as Parameters<typeof reader.readContract>[0]),
    },
    {
      salt: pad(toHex(options.salt ?? 0n), { size: 32 }),
      ...(deposit !== undefined && {
        depositStrategy: ({ minimumDepositAmount }) =>
          (deposit > BigInt(minimumDepositAmount) ? deposit : BigInt(minimumDepositAmount)).toString(),
      }),
    },
  );
}

/** `x402Client` paying through a channel only (and nothing else the 402 offers). */
export function channelPayer(client: BatchClient): x402Client {
  return new x402Client().register(NETWORK, client);
}
