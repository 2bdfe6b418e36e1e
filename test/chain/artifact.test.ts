import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { compileUsdc, renderArtifact, sha256, USDC_ARTIFACT, USDC_SOURCE } from "../../scripts/contracts.ts";
import { USDC_BALANCES_SLOT, USDC_OWNER_SLOT, usdcAbi } from "../../src/chain/usdc.ts";

interface AbiParam {
  type: string;
  name?: string;
  indexed?: boolean;
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
  const params = (ps: readonly AbiParam[] = []) =>
    ps.map((p) => [p.type, p.indexed ? "indexed" : "", p.name ?? ""].filter(Boolean).join(" ")).join(", ");
  return abi
    .map(
      (i) =>
        `${i.type} ${i.name ?? ""}(${params(i.inputs)}) ${i.stateMutability ?? ""} (${params(i.outputs)})`,
    )
    .sort();
}

describe("USDC artifact", () => {
  const committedText = fs.readFileSync(USDC_ARTIFACT, "utf8");
  const committed = JSON.parse(committedText);

  it("is exactly what the pinned solc makes of the committed source (run `npm run build:contracts`)", () => {
    const compiled = compileUsdc();
    expect(compiled.sourceSha256).toBe(sha256(fs.readFileSync(USDC_SOURCE)));
    expect(committed.sourceSha256).toBe(compiled.sourceSha256);
    expect(committed).toEqual(compiled);
    expect(committedText).toBe(renderArtifact(compiled));
  });

  it("matches the typed ABI and the storage slots the devnet relies on", () => {
    expect(canonical(usdcAbi)).toEqual(canonical(committed.abi));
    expect(committed.storageSlots.owner).toBe(USDC_OWNER_SLOT);
    expect(committed.storageSlots.balanceOf).toBe(USDC_BALANCES_SLOT);
  });
});
