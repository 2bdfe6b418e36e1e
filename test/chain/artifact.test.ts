import fs from "node:fs";
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_DOMAIN,
  claimBatchTypes,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  refundTypes,
  voucherTypes,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyABI,
} from "@x402/evm";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import {
  type AbiEvent,
  type AbiFunction,
  hashTypedData,
  keccak256,
  parseAbi,
  type TypedData,
  toEventSelector,
  toFunctionSelector,
  toHex,
} from "viem";
import { describe, expect, it } from "vitest";
import {
  BATCH_SETTLEMENT_CONTRACT,
  CONTRACTS,
  type ContractSpec,
  compileContract,
  ERC3009_COLLECTOR_CONTRACT,
  EXACT_PROXY_CONTRACT,
  MULTICALL3_CONTRACT,
  PERMIT2_COLLECTOR_CONTRACT,
  PERMIT2_CONTRACT,
  renderArtifact,
  sha256,
  UPTO_PROXY_CONTRACT,
  USDC_CONTRACT,
} from "../../scripts/contracts.ts";
import {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS as OUR_ERC3009_COLLECTOR,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
} from "../../src/chain/base.ts";
import { batchSettlementAbi } from "../../src/chain/batch-settlement.ts";
import { erc3009DepositCollectorAbi } from "../../src/chain/erc3009-deposit-collector.ts";
import { exactProxyAbi } from "../../src/chain/exact-proxy.ts";
import { multicall3Abi } from "../../src/chain/multicall3.ts";
import { PERMIT2_NONCE_BITMAP_SLOT, permit2Abi } from "../../src/chain/permit2.ts";
import { permit2DepositCollectorAbi } from "../../src/chain/permit2-deposit-collector.ts";
import { uptoProxyAbi } from "../../src/chain/upto-proxy.ts";
import { USDC_BALANCES_SLOT, USDC_OWNER_SLOT, usdcAbi } from "../../src/chain/usdc.ts";

interface AbiParam {
  type: string;
  name?: string;
  indexed?: boolean;
  components?: readonly AbiParam[];
}
interface AbiItem {
  type: string;
  name?: string;
  stateMutability?: string;
  inputs?: readonly AbiParam[];
  outputs?: readonly AbiParam[];
}

/** One line per ABI item, ignoring what differs only in form (solc's `internalType`, empty names). */
function canonical(abi: readonly AbiItem[]): string[] {
  // A struct is spelled out field by field: its layout is what the selector and the encoding depend on.
  const params = (ps: readonly AbiParam[] = []): string =>
    ps
      .map((p) =>
        [
          p.components ? p.type.replace("tuple", `(${params(p.components)})`) : p.type,
          p.indexed ? "indexed" : "",
          p.name ?? "",
        ]
          .filter(Boolean)
          .join(" "),
      )
      .join(", ");
  return abi
    .map(
      (i) =>
        `${i.type} ${i.name ?? ""}(${params(i.inputs)}) ${i.stateMutability ?? ""} (${params(i.outputs)})`,
    )
    .sort();
}

/** Each compiled contract's typed ABI (src/chain/*.ts). */
const TYPED_ABIS = new Map<ContractSpec, readonly AbiItem[]>([
  [USDC_CONTRACT, usdcAbi],
  [PERMIT2_CONTRACT, permit2Abi],
  [UPTO_PROXY_CONTRACT, uptoProxyAbi],
  [MULTICALL3_CONTRACT, multicall3Abi],
  [EXACT_PROXY_CONTRACT, exactProxyAbi],
  [BATCH_SETTLEMENT_CONTRACT, batchSettlementAbi],
  [ERC3009_COLLECTOR_CONTRACT, erc3009DepositCollectorAbi],
  [PERMIT2_COLLECTOR_CONTRACT, permit2DepositCollectorAbi],
]);

describe.each(CONTRACTS.map((spec) => ({ spec, name: spec.contractName })))("$name artifact", ({ spec }) => {
  const committedText = fs.readFileSync(spec.artifact, "utf8");
  const committed = JSON.parse(committedText);

  it("is exactly what the pinned solc makes of the committed source (run `npm run build:contracts`)", () => {
    const compiled = compileContract(spec);
    expect(compiled.sourceSha256).toBe(sha256(fs.readFileSync(spec.source)));
    expect(committed.sourceSha256).toBe(compiled.sourceSha256);
    expect(committed).toEqual(compiled);
    expect(committedText).toBe(renderArtifact(compiled));
  });

  it("matches its typed ABI", () => {
    expect(canonical(TYPED_ABIS.get(spec) ?? [])).toEqual(canonical(committed.abi));
  });
});

describe("the storage slots and ABIs the devnet and the SDK rely on", () => {
  const abiOf = (spec: ContractSpec) => JSON.parse(fs.readFileSync(spec.artifact, "utf8")).abi as AbiItem[];

  it("USDC: owner and balances where the devnet writes and reads them", () => {
    const { storageSlots } = JSON.parse(fs.readFileSync(USDC_CONTRACT.artifact, "utf8"));
    expect(storageSlots.owner).toBe(USDC_OWNER_SLOT);
    expect(storageSlots.balanceOf).toBe(USDC_BALANCES_SLOT);
  });

  it("Permit2: the nonce bitmap at slot 0", () => {
    const { storageSlots } = JSON.parse(fs.readFileSync(PERMIT2_CONTRACT.artifact, "utf8"));
    expect(storageSlots).toEqual({ nonceBitmap: PERMIT2_NONCE_BITMAP_SLOT });
  });

  it("the upto proxy has exactly the ABI @x402/evm calls it with (functions, events, errors)", () => {
    expect(canonical(abiOf(UPTO_PROXY_CONTRACT))).toEqual(
      canonical(x402UptoPermit2ProxyABI as readonly AbiItem[]),
    );
  });

  it("the exact proxy has exactly the ABI @x402/evm calls it with (functions, events, errors)", () => {
    expect(canonical(abiOf(EXACT_PROXY_CONTRACT))).toEqual(
      canonical(x402ExactPermit2ProxyABI as readonly AbiItem[]),
    );
  });

  it("the devnet installs x402's contracts where @x402/evm looks for them", () => {
    expect(X402_EXACT_PROXY_ADDRESS).toBe(x402ExactPermit2ProxyAddress);
    expect(X402_BATCH_SETTLEMENT_ADDRESS).toBe(BATCH_SETTLEMENT_ADDRESS);
    expect(OUR_ERC3009_COLLECTOR).toBe(ERC3009_DEPOSIT_COLLECTOR_ADDRESS);
  });
});

/**
 * `@x402/evm` 2.27's ABI of the batch-settlement escrow (`batchSettlementABI`, in its
 * `dist/esm/chunk-H25OEB2U.mjs`, from `src/batch-settlement/abi.ts`), copied as the package exports it from
 * no public entry point: every function and event the SDK's client and facilitator call or read.
 */
const SDK_CHANNEL_CONFIG =
  "(address payer, address payerAuthorizer, address receiver, address receiverAuthorizer, address token, uint40 withdrawDelay, bytes32 salt)";
const SDK_VOUCHER_CLAIM = `((${SDK_CHANNEL_CONFIG} channel, uint128 maxClaimableAmount) voucher, bytes signature, uint128 totalClaimed)`;
const SDK_BATCH_SETTLEMENT_ABI = parseAbi([
  "function multicall(bytes[] data) returns (bytes[] results)",
  `function deposit(${SDK_CHANNEL_CONFIG} config, uint128 amount, address collector, bytes collectorData)`,
  `function claim(${SDK_VOUCHER_CLAIM}[] voucherClaims)`,
  `function claimWithSignature(${SDK_VOUCHER_CLAIM}[] voucherClaims, bytes authorizerSignature)`,
  "function settle(address receiver, address token)",
  `function initiateWithdraw(${SDK_CHANNEL_CONFIG} config, uint128 amount)`,
  `function finalizeWithdraw(${SDK_CHANNEL_CONFIG} config)`,
  `function refund(${SDK_CHANNEL_CONFIG} config, uint128 amount)`,
  `function refundWithSignature(${SDK_CHANNEL_CONFIG} config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature)`,
  `function getChannelId(${SDK_CHANNEL_CONFIG} config) view returns (bytes32)`,
  "function CHANNEL_CONFIG_TYPEHASH() view returns (bytes32)",
  "function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)",
  "function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)",
  "function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)",
  "function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns (bytes32)",
  "function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns (bytes32)",
  "function refundNonce(bytes32 channelId) view returns (uint256)",
  `function getClaimBatchDigest(${SDK_VOUCHER_CLAIM}[] voucherClaims) view returns (bytes32)`,
  "event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)",
]);

/** The escrow's events as x402's contract declares them (and the SDK's indexers decode them). */
const BATCH_SETTLEMENT_EVENTS = parseAbi([
  "struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }",
  "event ChannelCreated(bytes32 indexed channelId, ChannelConfig config)",
  "event ChannelClosed(bytes32 indexed channelId, ChannelConfig config)",
  "event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)",
  "event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)",
  "event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)",
  "event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)",
  "event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter)",
  "event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount)",
]);

/**
 * The SDK's `channelConfigTypes` (in its constants chunk, `chunk-5XX3PMSD.mjs`), copied as it is not
 * exported; the test below checks the copy against the SDK's exported `computeChannelId`.
 */
const CHANNEL_CONFIG_TYPES = {
  ChannelConfig: [
    { name: "payer", type: "address" },
    { name: "payerAuthorizer", type: "address" },
    { name: "receiver", type: "address" },
    { name: "receiverAuthorizer", type: "address" },
    { name: "token", type: "address" },
    { name: "withdrawDelay", type: "uint40" },
    { name: "salt", type: "bytes32" },
  ],
} as const;

/** EIP-712 `encodeType`: the primary type, then every type it references, sorted by name. */
function encodeType(types: TypedData, primary: string): string {
  const referenced = new Set<string>();
  const visit = (name: string) => {
    if (referenced.has(name) || !types[name]) return;
    referenced.add(name);
    for (const field of types[name]) visit(field.type.replace(/\[\d*\]$/, ""));
  };
  visit(primary);
  referenced.delete(primary);
  return [primary, ...[...referenced].sort()]
    .map((name) => `${name}(${(types[name] ?? []).map((f) => `${f.type} ${f.name}`).join(",")})`)
    .join("");
}

describe("the batch-settlement escrow against @x402/evm", () => {
  const compiled = JSON.parse(fs.readFileSync(BATCH_SETTLEMENT_CONTRACT.artifact, "utf8")).abi as AbiItem[];
  const compiledFunctions = compiled.filter((i) => i.type === "function") as AbiFunction[];
  const compiledEvents = compiled.filter((i) => i.type === "event") as AbiEvent[];

  it.each(SDK_BATCH_SETTLEMENT_ABI.filter((i) => i.type === "function").map((f) => ({ f, name: f.name })))(
    "$name: the SDK's selector, outputs and mutability",
    ({ f }) => {
      const ours = compiledFunctions.find((c) => c.name === f.name);
      expect(ours, `no ${f.name} in the compiled ABI`).toBeDefined();
      if (!ours) return;
      expect(toFunctionSelector(ours)).toBe(toFunctionSelector(f));
      expect(canonical([ours as AbiItem])).toEqual(canonical([f as AbiItem]));
    },
  );

  it("emits Settled with the SDK's topic", () => {
    const sdk = SDK_BATCH_SETTLEMENT_ABI.find((i) => i.type === "event" && i.name === "Settled") as AbiEvent;
    const ours = compiledEvents.find((e) => e.name === "Settled");
    expect(ours && toEventSelector(ours)).toBe(toEventSelector(sdk));
  });

  it("declares x402's events with their exact signatures, and besides them only EIP-5267's", () => {
    const expected = BATCH_SETTLEMENT_EVENTS.filter((i) => i.type === "event");
    expect(canonical(compiledEvents.filter((e) => e.name !== "EIP712DomainChanged"))).toEqual(
      canonical(expected),
    );
    expect(compiledEvents.map((e) => e.name)).toContain("EIP712DomainChanged");
    expect(toEventSelector(compiledEvents.find((e) => e.name === "ChannelCreated") as AbiEvent)).toBe(
      keccak256(toHex("ChannelCreated(bytes32,(address,address,address,address,address,uint40,bytes32))")),
    );
  });

  it("the copy of the SDK's ChannelConfig types hashes as the SDK's computeChannelId", () => {
    const config = {
      payer: "0x1111111111111111111111111111111111111111",
      payerAuthorizer: "0x2222222222222222222222222222222222222222",
      receiver: "0x3333333333333333333333333333333333333333",
      receiverAuthorizer: "0x4444444444444444444444444444444444444444",
      token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      withdrawDelay: 900,
      salt: `0x${"ab".repeat(32)}`,
    } as const;
    expect(
      hashTypedData({
        domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: 8453, verifyingContract: BATCH_SETTLEMENT_ADDRESS },
        types: CHANNEL_CONFIG_TYPES,
        primaryType: "ChannelConfig",
        message: config,
      }),
    ).toBe(computeChannelId(config, 8453));
  });

  it.each([
    ["CHANNEL_CONFIG_TYPEHASH", CHANNEL_CONFIG_TYPES, "ChannelConfig"],
    ["VOUCHER_TYPEHASH", voucherTypes, "Voucher"],
    ["REFUND_TYPEHASH", refundTypes, "Refund"],
    ["CLAIM_ENTRY_TYPEHASH", claimBatchTypes, "ClaimEntry"],
    ["CLAIM_BATCH_TYPEHASH", claimBatchTypes, "ClaimBatch"],
  ] as const)(
    "%s is the hash of the SDK's %s types, pushed by the compiled getter",
    (name, types, primary) => {
      const typeHash = keccak256(toHex(encodeType(types as unknown as TypedData, primary))).slice(2);
      // The getter's whole body is `PUSH32 <hash>` and a return: the hash is in the code, after opcode 0x7f.
      const code = JSON.parse(fs.readFileSync(BATCH_SETTLEMENT_CONTRACT.artifact, "utf8")).deployedBytecode;
      expect(code, name).toContain(`7f${typeHash}`);
      expect(compiledFunctions.some((f) => f.name === name)).toBe(true);
    },
  );
});
