/**
 * `x402-merchants facilitator`: the project's facilitator alone on a chain given by its RPC, its key from
 * the environment; a payment verifies and settles through it over HTTP, and SIGTERM stops it. One devnet
 * for the file (each case its own signer or payee on it); the refusals, which end at once, run in this
 * process (runMain).
 */
import { HTTPFacilitatorClient } from "@x402/core/server";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { useDevnet } from "../helpers/chain.ts";
import { isolatedDatabaseOptions, LEDGER_KIND } from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";
import { startCli } from "../helpers/process.ts";
import { newMerchant, pay, requirementsFor, usdcReader } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 1 });

/**
 * The facilitator's state, removed after the test: a schema of the server where the tests have one (CI), else
 * the facilitator's PGlite cluster alone. Its store is not what this file tests, and a PGlite started in the
 * child costs it a CPU-second or more.
 */
async function facilitatorState(): Promise<{ dataDir: string; env: { DATABASE_URL: string } }> {
  const options = await isolatedDatabaseOptions(LEDGER_KIND, "facilitator");
  onTestFinished(options.cleanup);
  return { dataDir: options.dataDir, env: { DATABASE_URL: options.databaseUrl ?? "" } };
}

describe("the facilitator command", () => {
  it("settles on the chain its RPC serves, with the key from the environment, and stops on SIGTERM", async () => {
    const { dataDir, env } = await facilitatorState();

    const started = startCli(["facilitator", "--rpc", chain.devnet.rpc, "--port", "0", "--data", dataDir], {
      ...env,
      X402M_FACILITATOR_KEY: chain.devnet.facilitatorAccount.privateKey,
    });
    const ready = JSON.parse(await started.line) as Record<string, unknown>;
    expect(ready).toMatchObject({
      network: "eip155:8453",
      signer: chain.devnet.facilitatorAccount.address,
      assets: [chain.devnet.usdc],
      metrics: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/),
    });
    expect(started.stderr()).not.toContain(chain.devnet.facilitatorAccount.privateKey.slice(2));

    const client = new HTTPFacilitatorClient({ url: ready.facilitator as string });
    const supported = await client.getSupported();
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ scheme: "exact", network: "eip155:8453" }),
    );
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "1500");
    const payment = await pay(chain.devnet.buyers[0] as (typeof chain.devnet.buyers)[0], requirements);
    expect(await client.verify(payment, requirements)).toMatchObject({ isValid: true });
    expect(await client.settle(payment, requirements)).toMatchObject({ success: true });
    expect(await usdcReader(chain.devnet.rpc).balanceOf(merchant)).toBe(1500n);

    started.child.kill("SIGTERM");
    expect(await started.exited).toBe(0);
    expect(started.stderr()).not.toMatch(/holds no ETH/);
  }, 60_000);

  it("starts with a key that holds no gas, and says once why settlements would fail", async () => {
    const { dataDir, env } = await facilitatorState();
    // Not fatal: the account may be funded while the facilitator runs.
    const unfunded = generatePrivateKey();
    const broke = startCli(["facilitator", "--rpc", chain.devnet.rpc, "--port", "0", "--data", dataDir], {
      ...env,
      X402M_FACILITATOR_KEY: unfunded,
    });
    await broke.line;
    expect(broke.stderr()).toContain(
      `warning: ${privateKeyToAccount(unfunded).address} holds no ETH on chain 8453; settlements fail until it pays gas`,
    );
    broke.child.kill("SIGTERM");
    expect(await broke.exited).toBe(0);
  }, 60_000);

  it("refuses to start without a valid key (naming its variable, never echoing it) or without --rpc", async () => {
    // An RPC that does not answer: were a refusal missed, the command would end at its chain id all the same.
    const noKey = await runMain(["facilitator", "--rpc", "http://127.0.0.1:1"], {
      X402M_FACILITATOR_KEY: "",
    });
    expect(noKey.code).not.toBe(0);
    expect(noKey.stderr).toMatch(/X402M_FACILITATOR_KEY/);
    expect(noKey.stderr.trim().split("\n")).toHaveLength(1);

    const badKey = await runMain(["facilitator", "--rpc", "http://127.0.0.1:1"], {
      X402M_FACILITATOR_KEY: "0x1234",
    });
    expect(badKey.code).not.toBe(0);
    expect(badKey.stderr).toMatch(/X402M_FACILITATOR_KEY/);
    expect(badKey.stderr).not.toContain("0x1234");

    const noRpc = await runMain(["facilitator"], {});
    expect(noRpc.code).toBe(2);
    expect(noRpc.stderr).toMatch(/--rpc URL/);
  });

  it("refuses to start with X402M_FACILITATOR_GROUP_SETTLEMENTS other than on or off, in one line, exit code 2", async () => {
    const refused = await runMain(["facilitator", "--rpc", "http://127.0.0.1:1"], {
      X402M_FACILITATOR_KEY: generatePrivateKey(),
      X402M_FACILITATOR_GROUP_SETTLEMENTS: "yes",
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split("\n")).toEqual([
      "x402-merchants: invalid X402M_FACILITATOR_GROUP_SETTLEMENTS: on or off (unset: off)",
    ]);
  });
});
