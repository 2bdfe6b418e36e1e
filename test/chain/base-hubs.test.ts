/**
 * The labelled list of Base exchange and bridge wallets that the clusters treat as hubs (issue 54):
 * every entry well formed, unique, and pointing at a public source where its label can be checked.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";

type Entry = { address: string; label: string; kind: string; source: string };
type HubList = { description: string; entries: Entry[] };

const list: HubList = JSON.parse(
  fs.readFileSync(new URL("../../src/chain/base-hubs.json", import.meta.url), "utf8"),
);

describe("src/chain/base-hubs.json", () => {
  it("has a description and only the documented keys", () => {
    expect(Object.keys(list).sort()).toEqual(["description", "entries"]);
    expect(list.description.trim()).not.toBe("");
    expect(list.entries.length).toBeGreaterThan(0);
    for (const entry of list.entries) {
      expect(Object.keys(entry).sort()).toEqual(["address", "kind", "label", "source"]);
    }
  });

  it("holds each address once, as 0x and 40 lower-case hex digits", () => {
    for (const { address } of list.entries) expect(address).toMatch(/^0x[0-9a-f]{40}$/);
    const addresses = list.entries.map((entry) => entry.address);
    expect(new Set(addresses).size).toBe(addresses.length);
  });

  it("labels each entry as an exchange or a bridge with a non-empty name", () => {
    for (const { kind, label } of list.entries) {
      expect(["exchange", "bridge"]).toContain(kind);
      expect(label.trim()).not.toBe("");
    }
    const labels = list.entries.map((entry) => entry.label);
    expect(new Set(labels).size).toBe(labels.length);
  });

  it("cites an https source for each entry", () => {
    for (const { source } of list.entries) {
      const url = new URL(source);
      expect(url.protocol).toBe("https:");
      expect(url.hostname).not.toBe("");
    }
  });

  it("keeps the entries sorted by label (numbers in labels compared as numbers)", () => {
    const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
    const labels = list.entries.map((entry) => entry.label);
    expect(labels).toEqual([...labels].sort(collator.compare));
  });
});
