/**
 * Pages read as a browser reads them: real legacy encodings that say what they are only in a `<meta>` (a
 * Shift_JIS page, a windows-1251 page with `http-equiv`), a header's charset, a byte-order mark that
 * overrides a wrong header, and unlabelled bytes guessed as browsers do. Before, all of these but the
 * header's came out as mojibake.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { decodeBody, fetchText } from "../../../src/merchant-kit/fetch/fetch-text.ts";

const ascii = (s: string) => [...Buffer.from(s, "latin1")];
const bytes = (...parts: (string | number[])[]) =>
  new Uint8Array(parts.flatMap((p) => (typeof p === "string" ? ascii(p) : p)));

/** 日本語 in Shift_JIS, Привет in windows-1251, "naïve “quoted”" in windows-1252. */
const SHIFT_JIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea];
const CP1251_PRIVET = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2];
const CP1252_NAIVE = [0x6e, 0x61, 0xef, 0x76, 0x65, 0x20, 0x93, 0x71, 0x75, 0x6f, 0x74, 0x65, 0x64, 0x94];

describe("a page's bytes decoded as a browser decodes them", () => {
  it("follows a <meta charset> or http-equiv when the header says nothing", () => {
    const sjis = bytes('<html><head><meta charset="Shift_JIS"><title>', SHIFT_JIS_NIHONGO, "</title>");
    expect(decodeBody(sjis, "text/html")).toContain("<title>日本語</title>");
    const cp1251 = bytes(
      '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><title>',
      CP1251_PRIVET,
      "</title>",
    );
    expect(decodeBody(cp1251, "text/html")).toContain("<title>Привет</title>");
  });

  it("takes the header's charset over a <meta>, and a byte-order mark over both", () => {
    const latin1 = bytes('<meta charset="utf-8"><p>caf', [0xe9], "</p>");
    expect(decodeBody(latin1, "text/html; charset=ISO-8859-1")).toContain("<p>café</p>");
    const bom = bytes([0xef, 0xbb, 0xbf], "<p>caf", [0xc3, 0xa9], "</p>");
    expect(decodeBody(bom, "text/html; charset=windows-1251")).toBe("<p>café</p>");
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from("<p>hé</p>", "utf16le")]);
    expect(decodeBody(utf16, "text/html")).toBe("<p>hé</p>");
  });

  it("reads unlabelled bytes as UTF-8 when they are, and as windows-1252 when not", () => {
    expect(decodeBody(new TextEncoder().encode("<p>naïve — ok</p>"), null)).toBe("<p>naïve — ok</p>");
    expect(decodeBody(bytes("<p>", CP1252_NAIVE, "</p>"), "text/html")).toBe("<p>naïve “quoted”</p>");
    expect(decodeBody(new TextEncoder().encode('{"name":"Zoë"}'), "application/json")).toBe('{"name":"Zoë"}');
  });

  it("is what fetchText gives for a Shift_JIS page served without a charset", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(Buffer.from(bytes('<meta charset="shift_jis"><title>', SHIFT_JIS_NIHONGO, "</title>")));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const page = await fetchText(`http://127.0.0.1:${port}/`, { allowAddress: () => true });
    expect(page.body).toContain("<title>日本語</title>");
  });
});
