import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { openDatabase } from "../../src/common/db/index.ts";
import { APPLICATION_NAME } from "../../src/common/db/postgres.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import {
  countingDatabase,
  DATABASE_KINDS,
  isolatedDatabaseOptions,
  openTestDatabase,
} from "../helpers/db.ts";
import { note, TEST_ENDPOINTS, testConfig } from "../helpers/merchant.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

/**
 * Issue 41: a host must not work while nobody asks it anything, and its PostgreSQL pool must not close and
 * reopen connections between requests. Both are checked on fake timers: what would fire in a quiet period
 * is made to fire now, and counted, with no clock in the assertions.
 */

/** Fake timers and clocks from now on; `delays` lists the delay of each timer callback run since. */
function countedFakeTimers(options: { shouldAdvanceTime?: boolean } = {}) {
  vi.useFakeTimers({
    // The clocks too: PGlite's PostgreSQL reads them to tell whether its timer is due, and sets it again if not.
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"],
    ...options,
  });
  const fired = { delays: [] as number[] };
  const fakes = { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval };
  type Schedule = (fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => unknown;
  const counted =
    (schedule: Schedule): Schedule =>
    (fn, ms, ...args) =>
      schedule(
        (...a: unknown[]) => {
          fired.delays.push(ms ?? 0);
          fn(...a);
        },
        ms,
        ...args,
      );
  Object.assign(globalThis, {
    setTimeout: counted(fakes.setTimeout as unknown as Schedule),
    setInterval: counted(fakes.setInterval as unknown as Schedule),
  });
  // Real timers again before anything registered earlier closes (the hooks run last first). The fakes go
  // back first: the fake clock's uninstall restores only its own functions (and deletes anything else).
  onTestFinished(() => {
    Object.assign(globalThis, fakes);
    vi.useRealTimers();
  });
  return fired;
}

describe.runIf(DATABASE_KINDS.includes("postgres"))("the PostgreSQL pool between requests", () => {
  it("keeps its connection however long it idles, names it, and closes only a burst's extras", async () => {
    const options = await isolatedDatabaseOptions("postgres");
    onTestFinished(options.cleanup);
    countedFakeTimers();
    const db = await openDatabase(options);
    onTestFinished(() => db.close());
    const backend = async () =>
      (
        await db.query<{ pid: number; name: string }>(
          "SELECT pg_backend_pid() AS pid, application_name AS name FROM pg_stat_activity WHERE pid = pg_backend_pid()",
        )
      ).rows[0];

    const first = await backend();
    expect(first?.name).toBe(APPLICATION_NAME);
    // An hour of quiet: pg's default closed an idle connection after 10 s, and the next request paid a new one.
    vi.advanceTimersByTime(60 * 60_000);
    expect((await backend())?.pid).toBe(first?.pid);

    // A burst of three at once opens two more connections; once idle, those two close and the first stays.
    const burst = async () => {
      let arrived = 0;
      let release: () => void = () => undefined;
      const together = new Promise<void>((resolve) => {
        release = resolve;
      });
      return Promise.all(
        [0, 1, 2].map(() =>
          db.transaction(async (tx) => {
            const pid = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
            if (++arrived === 3) release();
            await together;
            return pid;
          }),
        ),
      );
    };
    const during = await burst();
    expect(new Set(during).size).toBe(3);
    expect(during).toContain(first?.pid);
    vi.advanceTimersByTime(60 * 60_000);
    const after = await burst();
    expect(after.filter((pid) => during.includes(pid))).toHaveLength(1);
  });

  it("names its connections as the URL says when it does", async () => {
    const options = await isolatedDatabaseOptions("postgres");
    onTestFinished(options.cleanup);
    const db = await openDatabase({
      ...options,
      databaseUrl: `${options.databaseUrl}&application_name=shop-7`,
    });
    onTestFinished(() => db.close());
    const { rows } = await db.query<{ name: string }>(
      "SELECT application_name AS name FROM pg_stat_activity WHERE pid = pg_backend_pid()",
    );
    expect(rows[0]?.name).toBe("shop-7");
  });
});

/** Verifies and settles every payment at once, touching no chain. */
const acceptingFacilitator: FacilitatorClient = {
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }],
    extensions: [],
    signers: {},
  }),
  verify: async (payload) => ({ isValid: true, payer: payerOf(payload) }),
  settle: async (payload, requirements) => ({
    success: true,
    transaction: `0x${"ab".repeat(32)}`,
    network: requirements.network,
    payer: payerOf(payload),
  }),
};

function payerOf(payload: { payload: Record<string, unknown> }): string {
  return (payload.payload as { authorization: { from: string } }).authorization.from;
}

describe.each(DATABASE_KINDS)("a merchant host on %s after paid requests", (kind) => {
  it("runs no timer and no statement in a quiet ten minutes", async () => {
    const state = await openTestDatabase(kind);
    onTestFinished(state.close);
    // Fake time that also moves with the real clock: the requests' own short waits pass as they would.
    const fired = countedFakeTimers({ shouldAdvanceTime: true });
    const { db, counts } = countingDatabase(state.db);
    const config = testConfig();
    const app = await merchantApp(
      {
        name: "idle",
        title: "Idle test",
        payTo: newMerchant(),
        publicUrl: "http://idle.test",
        endpoints: [...TEST_ENDPOINTS, note],
      },
      {
        services: { db, config },
        facilitator: acceptingFacilitator,
        payments: config.payments,
        funds: async () => ({ balance: 10n ** 12n, used: new Set() }),
      },
    );
    const buyer = new x402Client().register(
      NETWORK,
      new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())),
    );
    const paid = async (path: string, init: RequestInit = {}) => {
      const unpaid = await app.request(path, init);
      expect(unpaid.status).toBe(402);
      const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") ?? "");
      const signature = encodePaymentSignatureHeader(await buyer.createPaymentPayload(required));
      const answer = await app.request(path, {
        ...init,
        headers: { ...init.headers, "PAYMENT-SIGNATURE": signature },
      });
      expect(answer.status, await answer.clone().text()).toBe(200);
    };
    await paid("/api/calc?expr=1%2B1");
    await paid("/api/calc?expr=2%2B2");
    const body = JSON.stringify({ text: "hello" });
    await paid("/api/note", { method: "POST", body, headers: { "content-type": "application/json" } });

    // One-off timers still pending (a log window, a closing connection) may fire in the first minutes...
    await vi.advanceTimersByTimeAsync(2 * 60_000);
    const statements = counts.statements.length;
    fired.delays = [];
    // ...after which nothing is due before the tables' hourly sweeps: no loop, no poll, no keep-alive query.
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(fired.delays).toEqual([]);
    expect(counts.statements.slice(statements)).toEqual([]);
  }, 60_000);
});
