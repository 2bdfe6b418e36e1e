/** Reading X's upload answers: what INIT and FINALIZE leave out, and answers that are not an upload. */
import { describe, expect, it } from "vitest";
import { mediaIdOf, parseUploaded } from "../../../../../src/merchants/social/providers/x-web/upload.ts";
import { tinyPng } from "../../contract.ts";

const file = { bytes: tinyPng(), type: "image/png", width: 2, height: 1 };

describe("x-web upload answers", () => {
  it("takes what FINALIZE leaves out from INIT and from the file", () => {
    const done = { media_id_string: "42", image: { w: 0, h: 7 } };
    expect(parseUploaded(done, { expires_after_secs: 600 }, "42", file)).toEqual({
      mediaId: "42",
      mediaKey: null,
      size: 33,
      expiresAfterSecs: 600,
      image: { type: "image/png", width: 2, height: 7 },
    });
    expect(parseUploaded({}, undefined, "42", file)).toMatchObject({ expiresAfterSecs: null, image: null });
  });

  it("answers 502 for an INIT without a numeric media id and a FINALIZE about another medium", () => {
    for (const init of [undefined, {}, { media_id_string: "12ab" }])
      expect(() => mediaIdOf(init)).toThrow(
        expect.objectContaining({ status: 502, code: "upstream_invalid" }),
      );
    expect(mediaIdOf({ media_id_string: "12" })).toBe("12");
    for (const done of [undefined, { media_id_string: "43" }])
      expect(() => parseUploaded(done, {}, "42", file)).toThrow(
        expect.objectContaining({ status: 502, code: "upstream_invalid" }),
      );
  });
});
