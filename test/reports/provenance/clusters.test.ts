import { describe, expect, it } from "vitest";
import { unionFind } from "../../../src/reports/provenance/cluster-links.ts";

describe("clusters from funder links", () => {
  it("joins wallets through funders up and down any number of levels, named by the smallest address", () => {
    const roots = unionFind([
      { wallet: "0xc1", funder: "0xb1" },
      { wallet: "0xc2", funder: "0xb2" },
      { wallet: "0xb1", funder: "0xa0" },
      { wallet: "0xb2", funder: "0xa0" },
      { wallet: "0xd1", funder: "0xd0" },
    ]);
    expect(Object.fromEntries(roots)).toEqual({
      "0xa0": "0xa0",
      "0xb1": "0xa0",
      "0xb2": "0xa0",
      "0xc1": "0xa0",
      "0xc2": "0xa0",
      "0xd0": "0xd0",
      "0xd1": "0xd0",
    });
  });

  it("names the same clusters whatever the links' order, cycles included", () => {
    const links = [
      { wallet: "0x3", funder: "0x2" },
      { wallet: "0x2", funder: "0x3" },
      { wallet: "0x5", funder: "0x3" },
      { wallet: "0x9", funder: "0x8" },
    ];
    const forward = unionFind(links);
    const backward = unionFind([...links].reverse());
    expect(Object.fromEntries(backward)).toEqual(Object.fromEntries(forward));
    expect(forward.get("0x5")).toBe("0x2");
  });
});
