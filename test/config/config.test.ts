/** The configuration: each setting read from its variable, and a bad one named in the error. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.ts";

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig({ env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
};

describe("the configuration", () => {
  it("reads the fetch allow-list as a comma list, and names the variable of a bad entry", () => {
    expect(loadConfig({ env: {} }).fetchAllow).toEqual([]);
    expect(
      loadConfig({ env: { X402M_FETCH_ALLOW: " 127.0.0.1, 10.0.0.0/8 ,wiki.internal,," } }).fetchAllow,
    ).toEqual(["127.0.0.1", "10.0.0.0/8", "wiki.internal"]);
    expect(refusal({ X402M_FETCH_ALLOW: "10.0.0.0/99" })).toMatch(/X402M_FETCH_ALLOW/);
  });

  it("names the variable of each setting it refuses", () => {
    expect(refusal({ X402M_RPC_URL: "ftp://x" })).toMatch(/X402M_RPC_URL/);
    expect(refusal({ X402M_FACILITATOR_URL: "nope" })).toMatch(/X402M_FACILITATOR_URL/);
    expect(refusal({ X402M_DNS_SERVERS: "not-an-ip" })).toMatch(/X402M_DNS_SERVERS/);
    expect(refusal({ X402M_UTILITY_PAY_TO: "0x12" })).toMatch(/X402M_UTILITY_PAY_TO/);
    expect(refusal({ X402M_UTILITY_PORT: "70000" })).toMatch(/X402M_UTILITY_PORT/);
  });

  it("defaults the chain that payers' balances are read from to the devnet's", () => {
    expect(loadConfig({ env: {} }).payments.rpcUrl).toBe("http://127.0.0.1:8545");
    expect(loadConfig({ env: { X402M_RPC_URL: "https://base.example/rpc" } }).payments.rpcUrl).toBe(
      "https://base.example/rpc",
    );
  });
});
