import fs from "node:fs";
import { x402UptoPermit2ProxyABI } from "@x402/evm";
import { describe, expect, it } from "vitest";
import {
  CONTRACTS,
  type ContractSpec,
  compileContract,
  MULTICALL3_CONTRACT,
  PERMIT2_CONTRACT,
  renderArtifact,
  sha256,
  UPTO_PROXY_CONTRACT,
  USDC_CONTRACT,
} from "../../scripts/contracts.ts";
import { multicall3Abi } from "../../src/chain/multicall3.ts";
import { PERMIT2_NONCE_BITMAP_SLOT, permit2Abi } from "../../src/chain/permit2.ts";
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
});
