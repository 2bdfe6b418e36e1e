/**
 * A merchant host's own channel authorizer key (X402M_<HOST>_CHANNEL_AUTHORIZER_KEY, or a file holding it):
 * read per host, an alias host taking its source's unless it has its own, and refused at start without the
 * key in the message: both set, a file that cannot be read or holds anything else, a value that is no key.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { loadConfig } from "../../../src/services/config.ts";

const keysOf = (env: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(loadConfig({ env }).merchants).map(([host, m]) => [host, m.channelAuthorizerKey]),
  );

function tempFile(content: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-authorizer-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "key");
  fs.writeFileSync(file, content);
  return file;
}

describe("a merchant host's channel authorizer key", () => {
  it("is none by default: the facilitator's authorizer", () => {
    expect(Object.values(keysOf({}))).toEqual([null, null, null, null, null]);
  });

  it("is read per host, from the variable or a file, and an alias host takes its source's", () => {
    const utility = generatePrivateKey();
    const social = generatePrivateKey();
    const proxy = generatePrivateKey();
    expect(
      keysOf({
        X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: utility,
        X402M_SOCIAL_CHANNEL_AUTHORIZER_KEY_FILE: tempFile(`${social}\n`),
        X402M_SOCIAL_PROXY_CHANNEL_AUTHORIZER_KEY: proxy,
      }),
    ).toEqual({
      utility,
      "utility-alias": utility,
      inference: null,
      social,
      "social-proxy": proxy,
    });
  });

  it("is refused at start, naming the setting and never the key", () => {
    const key = generatePrivateKey();
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ env });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    const both = refusal({
      X402M_INFERENCE_CHANNEL_AUTHORIZER_KEY: key,
      X402M_INFERENCE_CHANNEL_AUTHORIZER_KEY_FILE: tempFile(key),
    });
    expect(both).toMatch(/both X402M_INFERENCE_CHANNEL_AUTHORIZER_KEY and .*_FILE are set/);
    const missing = refusal({ X402M_INFERENCE_CHANNEL_AUTHORIZER_KEY_FILE: "/nonexistent/x402m-key" });
    expect(missing).toMatch(/invalid X402M_INFERENCE_CHANNEL_AUTHORIZER_KEY_FILE: cannot read .* \(ENOENT\)/);
    const junk = refusal({ X402M_INFERENCE_CHANNEL_AUTHORIZER_KEY_FILE: tempFile(`${key}\nextra`) });
    expect(junk).toMatch(/must hold a 32-byte private key/);
    const short = refusal({ X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: key.slice(0, 40) });
    expect(short).toBe(
      "invalid X402M_UTILITY_CHANNEL_AUTHORIZER_KEY: a 32-byte private key in hex, 0x-prefixed",
    );
    for (const message of [both, missing, junk, short]) expect(message).not.toContain(key.slice(2, 40));
  });
});
