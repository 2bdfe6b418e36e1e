import { describe, expect, it } from "vitest";
import { BadInputError } from "../../../src/common/errors.ts";
import { nameColour } from "../../../src/demo/shops/colour.ts";
import { parseNotation, roll } from "../../../src/demo/shops/dice.ts";
import { fortune, fortuneFor, PROVERBS } from "../../../src/demo/shops/fortune.ts";
import { hash, hashBulk } from "../../../src/demo/shops/hash.ts";
import { checkIban, iban } from "../../../src/demo/shops/iban.ts";
import { password } from "../../../src/demo/shops/password.ts";
import { pick, shuffle } from "../../../src/demo/shops/picker.ts";
import { convert, convertTimestamp } from "../../../src/demo/shops/timestamp.ts";
import { uuid } from "../../../src/demo/shops/uuid.ts";
import { call } from "./helpers.ts";

describe("fortune teller", () => {
  it("is deterministic per seed and draws from 40+ proverbs", async () => {
    expect(PROVERBS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(PROVERBS).size).toBe(PROVERBS.length);
    expect(await call(fortune, { seed: "bob" })).toEqual(fortuneFor("bob"));
    const f = fortuneFor("bob");
    expect(PROVERBS).toContain(f.fortune);
    expect(new Set(f.lucky_numbers).size).toBe(6);
    for (const n of f.lucky_numbers) expect(n).toBeGreaterThanOrEqual(1);
    const drawn = new Set(Array.from({ length: 200 }, (_, i) => fortuneFor(`seed-${i}`).number));
    expect(drawn.size).toBeGreaterThan(30);
    expect(fortune.input.safeParse({ seed: "" }).success).toBe(false);
  });
});

describe("dice", () => {
  it("rolls within bounds", async () => {
    for (let i = 0; i < 50; i++) {
      const r = (await call(roll, { notation: "3d6-2" })) as { rolls: number[]; total: number };
      expect(r.rolls).toHaveLength(3);
      for (const d of r.rolls) expect(d >= 1 && d <= 6).toBe(true);
      expect(r.total).toBe(r.rolls.reduce((a, b) => a + b, 0) - 2);
    }
    expect(await call(roll, { notation: "D20" })).toMatchObject({ notation: "1d20", min: 1, max: 20 });
  });

  it("refuses bad notation", () => {
    expect(roll.input.safeParse({ notation: "2x6" }).success).toBe(false);
    expect(() => parseNotation("0d6")).toThrow(BadInputError);
    expect(() => parseNotation("101d6")).toThrow(BadInputError);
    expect(() => parseNotation("1d1")).toThrow(BadInputError);
  });
});

describe("uuid and password", () => {
  it("gives distinct v4 UUIDs", async () => {
    const r = (await call(uuid, { count: "20" })) as { uuids: string[] };
    expect(new Set(r.uuids).size).toBe(20);
    for (const u of r.uuids)
      expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await call(uuid, {})).toMatchObject({ uuids: [expect.any(String)] });
    expect(uuid.input.safeParse({ count: "21" }).success).toBe(false);
  });

  it("gives passwords of the asked length and classes", async () => {
    const r = (await call(password, { length: "12", count: "5", symbols: "false" })) as {
      passwords: string[];
      alphabet_size: number;
    };
    expect(r.passwords).toHaveLength(5);
    expect(r.alphabet_size).toBe(62);
    for (const p of r.passwords) {
      expect(p).toMatch(/^[A-Za-z0-9]{12}$/);
      expect(p).toMatch(/[a-z]/);
      expect(p).toMatch(/[A-Z]/);
      expect(p).toMatch(/\d/);
    }
    expect(password.input.safeParse({ length: "7" }).success).toBe(false);
    expect(password.input.safeParse({ symbols: "maybe" }).success).toBe(false);
  });
});

describe("hash house", () => {
  it("hashes known vectors", async () => {
    expect(await call(hash, { text: "abc" })).toMatchObject({
      digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    });
    expect(await call(hash, { text: "abc", algorithm: "sha512", encoding: "base64" })).toMatchObject({
      digest: "3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw==",
    });
    expect(await call(hash, { text: "héllo" })).toMatchObject({ bytes: 6 });
  });

  it("hashes in bulk and refuses more than 1,000 texts", async () => {
    const texts = Array.from({ length: 1000 }, (_, i) => `item ${i % 500}`);
    const r = (await call(hashBulk, { texts })) as { count: number; distinct: number; digests: string[] };
    expect(r.count).toBe(1000);
    expect(r.distinct).toBe(500);
    expect(hashBulk.input.safeParse({ texts: [...texts, "x"] }).success).toBe(false);
    expect(hashBulk.input.safeParse({ texts: [] }).success).toBe(false);
    expect(hash.input.safeParse({ text: "a", algorithm: "crc32" }).success).toBe(false);
  });
});

describe("IBAN inspector", () => {
  it("accepts valid IBANs", async () => {
    expect(await call(iban, { iban: "GB82WEST12345698765432" })).toMatchObject({
      valid: true,
      country: "GB",
    });
    expect(checkIban("de89 3704 0044 0532 0130 00")).toMatchObject({
      valid: true,
      iban: "DE89370400440532013000",
      formatted: "DE89 3704 0044 0532 0130 00",
    });
  });

  it("explains invalid ones", () => {
    expect(checkIban("GB83WEST12345698765432")).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/97/),
    });
    expect(checkIban("GB82WEST1234569876543")).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/22/),
    });
    expect(checkIban("ZZ82WEST12345698765432")).toMatchObject({ valid: false });
    expect(iban.input.safeParse({ iban: "GB82-WEST" }).success).toBe(false);
  });
});

describe("colour namer", () => {
  it("finds exact and nearest names", () => {
    expect(nameColour("#008080")).toMatchObject({ name: "teal", exact: true, distance: 0 });
    expect(nameColour("f00")).toMatchObject({ hex: "#ff0000", name: "red", exact: true });
    expect(nameColour("#010180")).toMatchObject({ name: "navy", exact: false });
  });
});

describe("timestamp converter", () => {
  it("converts in UTC and in zones, seconds and milliseconds", async () => {
    expect(convertTimestamp(0, "UTC")).toMatchObject({
      iso_utc: "1970-01-01T00:00:00.000Z",
      local: "1970-01-01T00:00:00+00:00",
      weekday: "Thursday",
    });
    expect(await call(convert, { ts: "1700000000123", unit: "ms", tz: "America/New_York" })).toMatchObject({
      local: "2023-11-14T17:13:20.123-05:00",
      offset: "-05:00",
      unix_seconds: 1700000000,
    });
    expect(convertTimestamp(-1000, "Asia/Kolkata")).toMatchObject({ local: "1970-01-01T05:29:59+05:30" });
  });

  it("refuses unknown zones and absurd timestamps", async () => {
    await expect(call(convert, { ts: "0", tz: "Mars/Olympus" })).rejects.toThrow(BadInputError);
    await expect(call(convert, { ts: "9999999999999999" })).rejects.toThrow(BadInputError);
    expect(convert.input.safeParse({ ts: "12.5" }).success).toBe(false);
  });
});

describe("random picker", () => {
  it("shuffles into a permutation and draws distinct items", async () => {
    const items = Array.from({ length: 50 }, (_, i) => `i${i}`);
    const s = (await call(shuffle, { items })) as { shuffled: string[] };
    expect([...s.shuffled].sort()).toEqual([...items].sort());
    const p = (await call(pick, { items, count: 50 })) as { picked: string[] };
    expect(new Set(p.picked).size).toBe(50);
    const r = (await call(pick, { items: ["a"], count: 5, unique: false })) as { picked: string[] };
    expect(r.picked).toEqual(["a", "a", "a", "a", "a"]);
  });

  it("refuses a draw larger than the list", async () => {
    await expect(call(pick, { items: ["a", "b"], count: 3 })).rejects.toThrow(BadInputError);
    expect(pick.input.safeParse({ items: [] }).success).toBe(false);
  });
});
