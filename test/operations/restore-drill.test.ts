/**
 * The restore drill of docs/operations.md, on each kind of state (PGlite always; PostgreSQL when
 * DATABASE_URL names a server, in a scratch database of its own): back up with the guide's commands, lose
 * the data, restore with the guide's commands, and send every payment again (scripts/restore-drill.ts).
 * Both kinds run on one devnet (each pays a merchant of its own), and `check` runs through the CLI's
 * `main` in this process: the same command on the same restored store, without a second process loading
 * DuckDB and the CLI's modules again.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GUIDE_COMMANDS, problems, restoreDrill } from "../../scripts/restore-drill.ts";
import { type Devnet, startDevnet } from "../../src/chain/devnet/index.ts";
import { DATABASE_KINDS, SERVER_URL } from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";

const USED = { status: 402, error: "invalid_exact_evm_nonce_already_used" };

describe("docs/operations.md", () => {
  it("gives the drill's backup and restore commands word for word", () => {
    const guide = fs.readFileSync("docs/operations.md", "utf8");
    for (const [name, command] of Object.entries(GUIDE_COMMANDS)) {
      expect(guide.includes(command), `${name}: ${command}`).toBe(true);
    }
  });
});

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
});

afterAll(async () => {
  await devnet?.stop();
});

describe.each(DATABASE_KINDS)("the restore drill, state on %s", (kind) => {
  it("restores the ledgers and the analytics store, and no payment is delivered twice", async () => {
    const result = await restoreDrill({
      postgres: kind === "postgres" ? (SERVER_URL ?? undefined) : undefined,
      devnet,
      runCli: runMain,
    });
    expect(result.kind).toBe(kind);

    // Before the backup: A paid and served; F charged nothing (its backend failed) and kept as failed.
    expect(result.before).toEqual({
      paid: { status: 200, error: null },
      failed: { status: 502, error: "upstream_failed" },
      replayPaid: USED,
      replayFailed: { status: 409, error: "payment_in_use" },
    });
    expect(result.afterBackup.paid).toEqual({ status: 200, error: null });

    // The restored state is the backup's: A and F, not B (settled after the backup).
    expect(result.restored.check.code).toBe(0);
    expect(result.restored.merchantRows).toEqual({ A: "settled", B: null, F: "failed" });
    expect(result.restored.facilitatorRows).toEqual({ A: "settled", B: null, F: "verified" });

    // Sent again after the restore: A refused by the ledgers and the chain, B by the chain alone (its
    // nonce is used there), F by the restored merchant ledger alone (the chain has never seen it; F is
    // still within the 300 s its buyer signed it for, else the facilitator would refuse it as expired).
    expect(result.replays).toEqual({ A: USED, B: USED, F: { status: 409, error: "payment_in_use" } });
    expect(result.payee.beforeReplays).toBe(2000n);
    expect(result.payee.afterReplays).toBe(2000n);
    expect(result.backendCalls.atEnd).toBe(result.backendCalls.beforeLoss);
    expect(result.fresh).toEqual({ status: 200, error: null });
    expect(result.payee.afterFresh).toBe(3000n);
    expect(problems(result)).toEqual([]);
  }, 240_000);
});
