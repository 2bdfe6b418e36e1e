/**
 * The devnet's USDC on a real anvil: Circle's identity and EIP-712 domain at Base's canonical address,
 * and EIP-3009 authorizations signed with viem exactly as an x402 buyer signs them.
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  domainSeparator,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  parseSignature,
  toHex,
  zeroAddress,
  zeroHash,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_USDC } from "../../src/chain/base.ts";
import { type Devnet, type DevnetAccount, devnetChain, startDevnet } from "../../src/chain/devnet/index.ts";
import type { TransferWithAuthorization as Authorization } from "../../src/chain/eip3009.ts";
import { eip2612Types, eip3009Types, USDC_CREATION_BYTECODE, usdcAbi } from "../../src/chain/usdc.ts";

let devnet: Devnet;
let clients: ReturnType<typeof connect>;

function connect(net: Devnet) {
  const chain = devnetChain(net.rpc);
  const transport = http(net.rpc);
  const wallet = (who: DevnetAccount) =>
    createWalletClient({ account: privateKeyToAccount(who.privateKey), chain, transport });
  return {
    public: createPublicClient({ chain, transport }),
    facilitator: wallet(net.facilitatorAccount),
    wallet,
  };
}

beforeAll(async () => {
  // No block timer: each test mines when it wants, so nothing depends on wall-clock time.
  devnet = await startDevnet({ port: 0, buyers: 3, blockTime: 0 });
  clients = connect(devnet);
});
afterAll(() => devnet?.stop());

const USDC = 1_000_000n;
const nonce = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)));
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;
const domain = () =>
  ({ name: "USD Coin", version: "2", chainId: 8453, verifyingContract: devnet.usdc }) as const;
const token = () => ({ address: devnet.usdc, abi: usdcAbi }) as const;

/** What an x402 buyer does: sign an EIP-3009 authorization valid for an hour around the chain's time. */
async function authorize(
  signer: DevnetAccount,
  fields: Partial<Authorization> & { to: Address; value: bigint },
  primaryType: "TransferWithAuthorization" | "ReceiveWithAuthorization" = "TransferWithAuthorization",
) {
  const now = (await clients.public.getBlock()).timestamp;
  const message: Authorization = {
    from: signer.address,
    validAfter: now - 600n,
    validBefore: now + 3600n,
    nonce: nonce(),
    ...fields,
  };
  const signature = await privateKeyToAccount(signer.privateKey).signTypedData({
    domain: domain(),
    types: eip3009Types,
    primaryType,
    message,
  });
  return { message, signature };
}

function vrs(m: Authorization, signature: Hex) {
  const { v, r, s } = parseSignature(signature);
  return withVrs(m, Number(v), r, s);
}
function withVrs(m: Authorization, v: number, r: Hex, s: Hex) {
  return [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, v, r, s] as const;
}
function packed(m: Authorization, signature: Hex) {
  return [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature] as const;
}

/** Sends a transaction, mines it and returns its receipt. */
async function mined(hash: Promise<Hex>) {
  const h = await hash;
  await devnet.mine();
  return clients.public.getTransactionReceipt({ hash: h });
}

const balance = (address: Address) =>
  clients.public.readContract({ ...token(), functionName: "balanceOf", args: [address] });
const used = (authorizer: Address, n: Hex) =>
  clients.public.readContract({ ...token(), functionName: "authorizationState", args: [authorizer, n] });

/** Simulates a transferWithAuthorization from the facilitator; resolves only if it would succeed. */
const simulateTransfer = (args: ReturnType<typeof vrs> | ReturnType<typeof packed>) =>
  clients.public.simulateContract({
    ...token(),
    account: devnet.facilitatorAccount.address,
    functionName: "transferWithAuthorization",
    args,
  });

describe("USDC on the devnet", () => {
  it("sits at Base's canonical address with Circle's identity and EIP-712 domain", async () => {
    expect(devnet.usdc.toLowerCase()).toBe(BASE_USDC);
    const read = <F extends "name" | "symbol" | "version" | "decimals" | "DOMAIN_SEPARATOR">(
      functionName: F,
    ) => clients.public.readContract({ ...token(), functionName });
    expect(await read("name")).toBe("USD Coin");
    expect(await read("symbol")).toBe("USDC");
    expect(await read("version")).toBe("2");
    expect(await read("decimals")).toBe(6);
    expect(await read("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain: domain() }));
    const { domain: announced, fields } = await clients.public.getEip712Domain({ address: devnet.usdc });
    expect(fields).toBe("0x0f");
    expect(announced).toEqual({ ...domain(), salt: zeroHash });
  });

  it("computes its domain separator from the address it runs at (a deployed copy differs)", async () => {
    const hash = await clients.wallet(devnet.owner).deployContract({
      abi: usdcAbi,
      bytecode: USDC_CREATION_BYTECODE,
    });
    await devnet.mine();
    const { contractAddress } = await clients.public.getTransactionReceipt({ hash });
    const copy = contractAddress as Address;
    expect(await clients.public.readContract({ address: copy, abi: usdcAbi, functionName: "owner" })).toBe(
      devnet.owner.address,
    );
    const separator = await clients.public.readContract({
      address: copy,
      abi: usdcAbi,
      functionName: "DOMAIN_SEPARATOR",
    });
    expect(separator).toBe(domainSeparator({ domain: { ...domain(), verifyingContract: copy } }));
    expect(separator).not.toBe(domainSeparator({ domain: domain() }));
  });

  it("uses FiatToken v2's EIP-3009 type hashes", async () => {
    const read = (
      functionName:
        | "TRANSFER_WITH_AUTHORIZATION_TYPEHASH"
        | "RECEIVE_WITH_AUTHORIZATION_TYPEHASH"
        | "CANCEL_AUTHORIZATION_TYPEHASH",
    ) => clients.public.readContract({ ...token(), functionName });
    // The values Circle's FiatTokenV2 declares.
    expect(await read("TRANSFER_WITH_AUTHORIZATION_TYPEHASH")).toBe(
      "0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267",
    );
    expect(await read("RECEIVE_WITH_AUTHORIZATION_TYPEHASH")).toBe(
      "0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8",
    );
    expect(await read("CANCEL_AUTHORIZATION_TYPEHASH")).toBe(
      "0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429",
    );
    expect(keccak256(toHex("CancelAuthorization(address authorizer,bytes32 nonce)"))).toBe(
      "0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429",
    );
  });

  for (const form of ["v, r, s", "bytes"] as const) {
    it(`settles a signed TransferWithAuthorization submitted by a third account (${form})`, async () => {
      const [buyer] = devnet.buyers as [DevnetAccount];
      const merchant = freshAddress();
      const before = await balance(buyer.address);
      const { message, signature } = await authorize(buyer, { to: merchant, value: 1_500_000n });
      const args = form === "bytes" ? packed(message, signature) : vrs(message, signature);

      const receipt = await mined(
        clients.facilitator.writeContract({ ...token(), functionName: "transferWithAuthorization", args }),
      );
      expect(receipt.status).toBe("success");
      expect(receipt.from).toBe(devnet.facilitatorAccount.address.toLowerCase());
      expect(await balance(merchant)).toBe(1_500_000n);
      expect(await balance(buyer.address)).toBe(before - 1_500_000n);
      expect(await used(buyer.address, message.nonce)).toBe(true);

      // The two logs an indexer pairs, AuthorizationUsed just before Transfer, as FiatToken emits them.
      const logs = parseEventLogs({ abi: usdcAbi, logs: receipt.logs });
      expect(logs.map((l) => [l.eventName, l.args])).toEqual([
        ["AuthorizationUsed", { authorizer: buyer.address, nonce: message.nonce }],
        ["Transfer", { from: buyer.address, to: merchant, value: 1_500_000n }],
      ]);
      expect(logs[1]?.logIndex).toBe((logs[0]?.logIndex ?? -2) + 1);

      // A replay of the same authorization, in either form, is refused.
      await expect(simulateTransfer(vrs(message, signature))).rejects.toThrow(
        "FiatTokenV2: authorization is used or canceled",
      );
      await expect(simulateTransfer(packed(message, signature))).rejects.toThrow(
        "FiatTokenV2: authorization is used or canceled",
      );
    });
  }

  it("refuses an authorization outside its validity window", async () => {
    const [buyer] = devnet.buyers as [DevnetAccount];
    const now = (await clients.public.getBlock()).timestamp;
    const early = await authorize(buyer, { to: freshAddress(), value: 1n, validAfter: now + 3600n });
    await expect(simulateTransfer(vrs(early.message, early.signature))).rejects.toThrow(
      "FiatTokenV2: authorization is not yet valid",
    );
    // validBefore is exclusive: an authorization valid before the latest block's time is expired.
    const late = await authorize(buyer, { to: freshAddress(), value: 1n, validAfter: 0n, validBefore: now });
    await expect(simulateTransfer(vrs(late.message, late.signature))).rejects.toThrow(
      "FiatTokenV2: authorization is expired",
    );
    expect(await used(buyer.address, late.message.nonce)).toBe(false);
  });

  it("refuses a wrong signer, an altered message and malformed signatures", async () => {
    const [victim, thief] = devnet.buyers as [DevnetAccount, DevnetAccount];
    const to = freshAddress();
    // The thief signs a transfer out of the victim's wallet.
    const forged = await authorize(thief, { from: victim.address, to, value: 5n * USDC });
    await expect(simulateTransfer(vrs(forged.message, forged.signature))).rejects.toThrow(
      "FiatTokenV2: invalid signature",
    );
    await expect(simulateTransfer(packed(forged.message, forged.signature))).rejects.toThrow(
      "FiatTokenV2: invalid signature",
    );

    const { message, signature } = await authorize(victim, { to, value: 1n });
    await expect(simulateTransfer(vrs({ ...message, value: 2n }, signature))).rejects.toThrow(
      "FiatTokenV2: invalid signature",
    );
    // A signature of the other type cannot be replayed as this one.
    await expect(
      clients.public.simulateContract({
        ...token(),
        account: to,
        functionName: "receiveWithAuthorization",
        args: vrs(message, signature),
      }),
    ).rejects.toThrow("FiatTokenV2: invalid signature");

    // The malleable twin (n - s, flipped v) of a valid signature, a bad v, a short signature.
    const { v, r, s } = parseSignature(signature);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const twin = withVrs(message, v === 27n ? 28 : 27, r, toHex(n - BigInt(s), { size: 32 }));
    await expect(simulateTransfer(twin)).rejects.toThrow("ECRecover: invalid signature 's' value");
    await expect(simulateTransfer(withVrs(message, 29, r, s))).rejects.toThrow(
      "ECRecover: invalid signature 'v' value",
    );
    await expect(simulateTransfer(packed(message, signature.slice(0, -2) as Hex))).rejects.toThrow(
      "ECRecover: invalid signature length",
    );
    // ecrecover's 0 for garbage must not pass as the zero address's signature.
    await expect(
      simulateTransfer(withVrs({ ...message, from: zeroAddress }, 27, zeroHash, zeroHash)),
    ).rejects.toThrow(/reason:\nECRecover: invalid signature\n/);
    expect(await used(victim.address, message.nonce)).toBe(false);
  });

  it("lets only the payee submit a ReceiveWithAuthorization", async () => {
    const [buyer, , payee] = devnet.buyers as [DevnetAccount, DevnetAccount, DevnetAccount];
    const { message, signature } = await authorize(
      buyer,
      { to: payee.address, value: 2n * USDC },
      "ReceiveWithAuthorization",
    );
    for (const args of [vrs(message, signature), packed(message, signature)]) {
      await expect(
        clients.public.simulateContract({
          ...token(),
          account: devnet.facilitatorAccount.address,
          functionName: "receiveWithAuthorization",
          args,
        }),
      ).rejects.toThrow("FiatTokenV2: caller must be the payee");
    }

    const before = await balance(payee.address);
    const receipt = await mined(
      clients.wallet(payee).writeContract({
        ...token(),
        functionName: "receiveWithAuthorization",
        args: packed(message, signature),
      }),
    );
    expect(receipt.status).toBe("success");
    expect(await balance(payee.address)).toBe(before + 2n * USDC);
    expect(await used(buyer.address, message.nonce)).toBe(true);
  });

  for (const form of ["v, r, s", "bytes"] as const) {
    it(`cancels an unused authorization, which then cannot be used (${form})`, async () => {
      const [buyer] = devnet.buyers as [DevnetAccount];
      const { message, signature } = await authorize(buyer, { to: freshAddress(), value: 1n });
      await simulateTransfer(vrs(message, signature)); // valid until canceled

      const cancel = await privateKeyToAccount(buyer.privateKey).signTypedData({
        domain: domain(),
        types: eip3009Types,
        primaryType: "CancelAuthorization",
        message: { authorizer: buyer.address, nonce: message.nonce },
      });
      const { v, r, s } = parseSignature(cancel);
      const receipt = await mined(
        form === "bytes"
          ? clients.facilitator.writeContract({
              ...token(),
              functionName: "cancelAuthorization",
              args: [buyer.address, message.nonce, cancel],
            })
          : clients.facilitator.writeContract({
              ...token(),
              functionName: "cancelAuthorization",
              args: [buyer.address, message.nonce, Number(v), r, s],
            }),
      );
      expect(receipt.status).toBe("success");
      expect(parseEventLogs({ abi: usdcAbi, logs: receipt.logs }).map((l) => [l.eventName, l.args])).toEqual([
        ["AuthorizationCanceled", { authorizer: buyer.address, nonce: message.nonce }],
      ]);
      expect(await used(buyer.address, message.nonce)).toBe(true);
      await expect(simulateTransfer(packed(message, signature))).rejects.toThrow(
        "FiatTokenV2: authorization is used or canceled",
      );
      await expect(
        clients.public.simulateContract({
          ...token(),
          account: devnet.facilitatorAccount.address,
          functionName: "cancelAuthorization",
          args: [buyer.address, message.nonce, cancel],
        }),
      ).rejects.toThrow("FiatTokenV2: authorization is used or canceled");
    });
  }

  it("keeps plain ERC-20 transfers, allowances, and minting for the owner only", async () => {
    const [alice, bob] = devnet.buyers as [DevnetAccount, DevnetAccount];
    const carol = freshAddress();
    const [aliceBefore, bobBefore] = [await balance(alice.address), await balance(bob.address)];

    expect(
      (
        await mined(
          clients
            .wallet(alice)
            .writeContract({ ...token(), functionName: "transfer", args: [carol, 3n * USDC] }),
        )
      ).status,
    ).toBe("success");
    await mined(
      clients
        .wallet(alice)
        .writeContract({ ...token(), functionName: "approve", args: [bob.address, 2n * USDC] }),
    );
    await mined(
      clients.wallet(bob).writeContract({
        ...token(),
        functionName: "transferFrom",
        args: [alice.address, carol, 2n * USDC],
      }),
    );
    expect(await balance(carol)).toBe(5n * USDC);
    expect(await balance(alice.address)).toBe(aliceBefore - 5n * USDC);
    expect(await balance(bob.address)).toBe(bobBefore);
    expect(
      await clients.public.readContract({
        ...token(),
        functionName: "allowance",
        args: [alice.address, bob.address],
      }),
    ).toBe(0n);
    await expect(
      clients.public.simulateContract({
        ...token(),
        account: bob.address,
        functionName: "transferFrom",
        args: [alice.address, carol, 1n],
      }),
    ).rejects.toThrow("ERC20: transfer amount exceeds allowance");
    await expect(
      clients.public.simulateContract({
        ...token(),
        account: carol,
        functionName: "transfer",
        args: [alice.address, 6n * USDC],
      }),
    ).rejects.toThrow("ERC20: transfer amount exceeds balance");

    await expect(
      clients.public.simulateContract({
        ...token(),
        account: alice.address,
        functionName: "mint",
        args: [alice.address, 1n],
      }),
    ).rejects.toThrow("USDC: caller is not the owner");
    const supply = await clients.public.readContract({ ...token(), functionName: "totalSupply" });
    await mined(
      clients.wallet(devnet.owner).writeContract({ ...token(), functionName: "mint", args: [carol, 7n] }),
    );
    expect(await balance(carol)).toBe(5n * USDC + 7n);
    expect(await clients.public.readContract({ ...token(), functionName: "totalSupply" })).toBe(supply + 7n);
  });

  it("takes an EIP-2612 permit from anyone, once per nonce, as FiatToken v2 does", async () => {
    const holder = privateKeyToAccount(generatePrivateKey());
    const spender = freshAddress();
    const now = (await clients.public.getBlock()).timestamp;
    const sign = (fields: { value: bigint; nonce: bigint; deadline: bigint }, by = holder) =>
      by.signTypedData({
        domain: domain(),
        types: eip2612Types,
        primaryType: "Permit",
        message: { owner: holder.address, spender, ...fields },
      });
    const nonces = () =>
      clients.public.readContract({ ...token(), functionName: "nonces", args: [holder.address] });
    expect(await nonces()).toBe(0n);
    const fields = { value: 5n * USDC, nonce: 0n, deadline: now + 600n };
    const signature = await sign(fields);
    const { v, r, s } = parseSignature(signature);
    const args = [holder.address, spender, fields.value, fields.deadline, Number(v), r, s] as const;
    const permit = (submitted: typeof args) =>
      clients.public.simulateContract({
        ...token(),
        account: devnet.facilitatorAccount.address,
        functionName: "permit",
        args: submitted,
      });

    // Another signer, another value, a passed deadline: refused with FiatToken's reasons.
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = parseSignature(await sign(fields, stranger));
    await expect(
      permit([holder.address, spender, fields.value, fields.deadline, Number(forged.v), forged.r, forged.s]),
    ).rejects.toThrow("EIP2612: invalid signature");
    await expect(
      permit([holder.address, spender, fields.value + 1n, fields.deadline, Number(v), r, s]),
    ).rejects.toThrow("EIP2612: invalid signature");
    const late = parseSignature(await sign({ ...fields, deadline: now - 1n }));
    await expect(
      permit([holder.address, spender, fields.value, now - 1n, Number(late.v), late.r, late.s]),
    ).rejects.toThrow("FiatTokenV2: permit is expired");

    // The facilitator submits it (the holder has no ETH): the allowance is set, the nonce moves on.
    const receipt = await mined(
      clients.facilitator.writeContract({ ...token(), functionName: "permit", args }),
    );
    expect(parseEventLogs({ abi: usdcAbi, logs: receipt.logs, eventName: "Approval" })[0]?.args).toEqual({
      owner: holder.address,
      spender,
      value: fields.value,
    });
    expect(
      await clients.public.readContract({
        ...token(),
        functionName: "allowance",
        args: [holder.address, spender],
      }),
    ).toBe(fields.value);
    expect(await nonces()).toBe(1n);
    // Used once: the same signature no longer matches the next nonce.
    await expect(permit(args)).rejects.toThrow("EIP2612: invalid signature");
    // The packed form takes the next nonce's.
    const next = await sign({ ...fields, value: 0n, nonce: 1n });
    await mined(
      clients.facilitator.writeContract({
        ...token(),
        functionName: "permit",
        args: [holder.address, spender, 0n, fields.deadline, next],
      }),
    );
    expect(
      await clients.public.readContract({
        ...token(),
        functionName: "allowance",
        args: [holder.address, spender],
      }),
    ).toBe(0n);
  });
});
