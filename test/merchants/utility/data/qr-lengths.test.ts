/**
 * Issue 21: every payload length a level holds must decode at the default size. Before the fix, 512 px
 * gave long payloads a fractional pitch (e.g. 2.83 px per module for version 40) and jsQR lost them.
 */
import { describe, expect, it } from "vitest";
import {
  BYTE_CAPACITY,
  ECC_LEVELS,
  type QrOptions,
  renderQr,
} from "../../../../src/merchants/utility/data/qr-engine.ts";
import { decodeQrPng } from "./qr-decode.ts";

const DEFAULTS: QrOptions = { size: 512, margin: 2, ecc: "M", dark: "#000000", light: "#ffffff" };
const STEPS = [1, 10, 50, 100, 200, 400, 800, 1200, 1600, 2000, 2500];

/** Lowercase and URL punctuation keep the whole payload in byte mode, so the level's byte capacity is its max. */
function payload(length: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz-._~/";
  let seed = length;
  let text = "";
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    text += alphabet[seed % alphabet.length];
  }
  return text;
}

const cases = ECC_LEVELS.flatMap((ecc) =>
  [...STEPS.filter((n) => n < BYTE_CAPACITY[ecc]), BYTE_CAPACITY[ecc]].map((length) => ({ ecc, length })),
);

// One test a pair: 42 renders and decodes in one test took 20 s on a loaded machine, its whole time limit.
describe("default-size PNGs decode at every payload length", () => {
  it.each(cases)("decodes level $ecc at $length bytes", async ({ ecc, length }) => {
    const text = payload(length);
    const result = await renderQr(text, { ...DEFAULTS, ecc });
    expect(decodeQrPng(result.png_base64).text, `${ecc}/${length} (v${result.version})`).toBe(text);
  });
});
