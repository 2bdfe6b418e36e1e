import { describe, expect, it } from "vitest";
import { BASE_DENIM_BLOCK, BASE_MAINNET_CLOCK, BlockTimeError } from "../../src/chain/block-clock.ts";
import { parseHeader } from "../../src/indexer/block-header.ts";

const hex = (n: number) => `0x${n.toString(16)}`;
const n = BASE_DENIM_BLOCK + 3;
const raw = (extra: Record<string, unknown> = {}) => ({
  number: hex(n),
  hash: "0xAB",
  parentHash: "0xCD",
  timestamp: hex(BASE_MAINNET_CLOCK.timeOf(n)),
  ...extra,
});

describe("a header's millisecond time (Base's nodes since Denim)", () => {
  it("is read when the RPC serves it as a quantity or a number, and left out otherwise", () => {
    const ms = BASE_MAINNET_CLOCK.msOf(n);
    expect(parseHeader(raw({ timestampMs: hex(ms) }), n).timestampMs).toBe(ms);
    expect(parseHeader(raw({ timestampMs: ms }), n).timestampMs).toBe(ms);
    expect(parseHeader(raw({ timestampMs: String(ms) }), n).timestampMs).toBeUndefined();
    expect(parseHeader(raw(), n)).toEqual({
      number: n,
      hash: "0xab",
      parentHash: "0xcd",
      timestamp: BASE_MAINNET_CLOCK.timeOf(n),
    });
  });

  it("is held to Base's clock to the millisecond: a header 200 ms off in the same second is refused", () => {
    const ms = BASE_MAINNET_CLOCK.msOf(n);
    expect(() => BASE_MAINNET_CLOCK.checkHeader(parseHeader(raw({ timestampMs: hex(ms) }), n))).not.toThrow();
    // Block n is 600 ms into its second: 200 ms later is still that second, so only the milliseconds tell.
    expect(ms % 1000).toBe(600);
    const off = parseHeader(raw({ timestampMs: hex(ms + 200) }), n);
    expect(() => BASE_MAINNET_CLOCK.checkHeader(off)).toThrow(BlockTimeError);
    expect(() => BASE_MAINNET_CLOCK.checkHeader(off)).toThrow(/has timestampMs .* gives /);
  });
});
