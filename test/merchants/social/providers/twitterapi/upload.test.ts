/** twitterapi.io's upload: which of its refusals are the caller's session, and the cookies it is sent. */
import { describe, expect, it } from "vitest";
import { AppError } from "../../../../../src/common/errors.ts";
import {
  loginCookies,
  uploadRefused,
} from "../../../../../src/merchants/social/providers/twitterapi/upload.ts";

describe("twitterapi.io uploads", () => {
  it("takes a refusal about the cookies as the caller's 401 and any other as a 502", () => {
    expect(uploadRefused("login_cookies is invalid or expired")).toMatchObject({
      status: 401,
      code: "invalid_session",
    });
    const other = uploadRefused("file too large");
    expect(other).toBeInstanceOf(AppError);
    expect(other).toMatchObject({ status: 502, code: "upstream_failed" });
    expect(other.message).not.toContain("file too large");
  });

  it("sends ct0 in the cookies only when the caller gave one", () => {
    const decode = (s: string) => JSON.parse(Buffer.from(s, "base64").toString("utf8"));
    expect(decode(loginCookies({ authToken: "t" }))).toEqual({ auth_token: "t" });
    expect(decode(loginCookies({ authToken: "t", ct0: "c" }))).toEqual({ auth_token: "t", ct0: "c" });
  });
});
