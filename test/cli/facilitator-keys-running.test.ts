/**
 * `facilitator keys add|list|revoke` while the facilitator runs on PGlite, which allows one process per
 * directory: the command finds the directory held and asks the running facilitator, through its loopback
 * `/admin/keys` and the token in `<data>/facilitator-admin.json` (readable by its user only). A key it
 * issues admits a payee at the running facilitator at once. Once the facilitator stops, the record is gone
 * and the command opens the database itself, where the keys are.
 */
import fs from "node:fs";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { VerifyError } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type Devnet, startDevnet } from "../../src/chain/devnet/index.ts";
import { adminRecordFile } from "../../src/services/admin.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";
import { startCli } from "../helpers/process.ts";
import { newMerchant, pay, requirementsFor } from "../helpers/x402.ts";

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
}, 60_000);
afterAll(async () => {
  await devnet?.stop();
});

describe("facilitator keys while the facilitator runs on PGlite", () => {
  it("adds, lists and revokes keys through the running facilitator, which admits a new key at once", async () => {
    const state = await isolatedDatabaseOptions("pglite");
    onTestFinished(state.cleanup);
    const keys = (...args: string[]) =>
      runMain(["facilitator", "keys", ...args, "--data", state.dataDir], { DATABASE_URL: "" });
    const facilitator = startCli(
      ["facilitator", "--rpc", devnet.rpc, "--port", "0", "--data", state.dataDir],
      {
        X402M_FACILITATOR_KEY: devnet.facilitatorAccount.privateKey,
        // Closed without a key on loopback too: an allow-list of someone else.
        X402M_FACILITATOR_PAYEES: newMerchant(),
      },
    );
    const ready = JSON.parse(await facilitator.line) as { facilitator: string };
    expect(fs.statSync(adminRecordFile(state.dataDir)).mode & 0o777).toBe(0o600);

    const payee = newMerchant();
    const requirements = requirementsFor(payee, "1000");
    const payment = await pay(devnet.buyers[0] as Devnet["buyers"][0], requirements);
    const refused = await new HTTPFacilitatorClient({ url: ready.facilitator })
      .verify(payment, requirements)
      .catch((e) => e);
    expect(refused).toBeInstanceOf(VerifyError);

    const added = await keys("add", "--payee", payee, "--gas-budget-eth-per-day", "0.01", "--name", "live");
    expect(added.code, added.stderr).toBe(0);
    const issued = JSON.parse(added.stdout) as { id: string; key: string };
    expect(issued).toMatchObject({ name: "live", payees: [payee.toLowerCase()], revokedAt: null });
    const auth = { Authorization: `Bearer ${issued.key}` };
    const keyed = new HTTPFacilitatorClient({
      url: ready.facilitator,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: {} }),
    });
    expect(await keyed.verify(payment, requirements)).toMatchObject({ isValid: true });

    const listed = await keys("list");
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(issued.key);
    expect(JSON.parse(listed.stdout.trim())).toMatchObject({ id: issued.id, today: { settlements: 0 } });

    // The admin path answers no one without the token, as if it were not there.
    const guess = await fetch(`${ready.facilitator}/admin/keys`, { headers: { authorization: "Bearer x" } });
    expect(guess.status).toBe(404);

    const revoked = await keys("revoke", issued.id);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: issued.id, revoked: true, already: false });
    expect((await keys("revoke", "k_000000000000")).code).toBe(2);
    const again = await keyed.verify(payment, requirements).catch((e) => e);
    expect(again).toMatchObject({ statusCode: 401, invalidReason: "api_key_invalid" });

    facilitator.child.kill("SIGTERM");
    expect(await facilitator.exited).toBe(0);
    expect(fs.existsSync(adminRecordFile(state.dataDir))).toBe(false);
    const offline = await keys("list");
    expect(offline.code, offline.stderr).toBe(0);
    expect(JSON.parse(offline.stdout.trim())).toMatchObject({ id: issued.id, revokedAt: expect.any(String) });
  }, 120_000);
});
