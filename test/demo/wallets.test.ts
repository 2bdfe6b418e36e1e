import { describe, expect, it } from "vitest";
import { derive } from "../../src/chain/devnet/index.ts";
import { MERCHANT_HOST_NAMES } from "../../src/config/ports.ts";
import { ATTESTER_KEY, merchantKeys, WALLET_HOSTS } from "../../src/demo/wallets.ts";

describe("the demo's merchant wallets", () => {
  it("keep the addresses the demo's weeks were played with, whatever order the roster lists hosts in", () => {
    // The wallets a saved demo world and its reports name: derived from the roster, they must not move.
    const keys = merchantKeys();
    const address = (index: number) => derive(index).address;
    expect(keys.hosts.utility.address).toBe(address(100));
    expect(keys.hosts["utility-alias"].address).toBe(address(100));
    expect(keys.hosts.inference.address).toBe(address(99));
    expect(keys.hosts.social.address).toBe(address(98));
    expect(keys.hosts["social-proxy"].address).toBe(address(97));
    expect(keys.shops[0]?.address).toBe(address(101));
  });

  it("give every host a wallet, an alias its source's, and none the attester's", () => {
    const keys = merchantKeys();
    expect(Object.keys(keys.hosts).sort()).toEqual([...MERCHANT_HOST_NAMES].sort());
    expect(WALLET_HOSTS).not.toContain("utility-alias");
    const attester = derive(ATTESTER_KEY).address;
    expect(Object.values(keys.hosts).map((k) => k.address)).not.toContain(attester);
  });
});
