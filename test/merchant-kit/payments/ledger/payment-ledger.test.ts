import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type Database, migrate } from "../../../../src/common/db/index.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../../../../src/merchant-kit/migrations.ts";
import {
  ESCROWED_NONCE_PREFIX,
  LOCK_RETENTION_SECONDS,
  type PaymentKey,
  PaymentLedger,
  SETTLED_RECHECK_SECONDS,
  UNPAID_LIMIT,
} from "../../../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { countingDatabase, DATABASE_KINDS, openTestDatabase } from "../../../helpers/db.ts";

const PAYER = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" as const;
const RESOURCE = "https://a.test/x";

function keyOf(n: number, amount = 1000n, validBefore = Math.floor(Date.now() / 1000) + 300): PaymentKey {
  return { payer: PAYER, nonce: `0x${n.toString(16).padStart(64, "0")}`, validBefore, amount };
}

async function states(db: Database): Promise<string[]> {
  const { rows } = await db.query<{ nonce: string; state: string }>(
    "SELECT nonce, state FROM merchant_payments ORDER BY nonce",
  );
  return rows.map((r) => `${BigInt(r.nonce)}:${r.state}`);
}

describe.each(DATABASE_KINDS)("the payment ledger on %s", (kind) => {
  // One database for the cases, emptied before each (opening PGlite costs more than a case): the ledger's
  // rows are all it keeps, and each case has a ledger of its own.
  let opened: Awaited<ReturnType<typeof openTestDatabase>>;
  beforeAll(async () => {
    opened = await openTestDatabase(kind);
    await migrate(opened.db, KIT_MODULE, KIT_MIGRATIONS);
  });
  afterAll(() => opened?.close());
  beforeEach(async () => {
    await opened.db.exec("TRUNCATE merchant_payments");
  });
  const ledgerOn = (now?: () => number) => ({ db: opened.db, ledger: new PaymentLedger(opened.db, now) });

  it("lets one of many concurrent takers through, gives the row back on release, and expires old ones", async () => {
    let now = Date.now();
    const { db, ledger } = ledgerOn(() => now);
    const key = keyOf(1, 1000n, Math.floor(now / 1000) + 60);

    const taken = await Promise.all(Array.from({ length: 8 }, () => ledger.take(key, RESOURCE)));
    expect(taken.filter(Boolean)).toHaveLength(1);
    // Another payer's same nonce is another authorization.
    expect(await ledger.take({ ...key, payer: "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }, RESOURCE)).toBe(
      true,
    );
    // The nonce is hex: its case does not make a new key.
    expect(await ledger.take({ ...key, nonce: key.nonce.toUpperCase().replace("0X", "0x") }, RESOURCE)).toBe(
      false,
    );

    await ledger.finish(key, "released");
    expect(await ledger.take(key, RESOURCE)).toBe(true);
    await ledger.finish(key, "settled");
    expect(await ledger.take(key, RESOURCE)).toBe(false);

    // Kept past validBefore, dropped once the retention has passed (the purge runs at most hourly).
    now += (LOCK_RETENTION_SECONDS + 3600) * 1000;
    await ledger.take(keyOf(2, 1000n, Math.floor(now / 1000) + 60), RESOURCE);
    expect(await states(db)).toEqual(["2:running"]);
  });

  it("takes and finishes concurrent requests' rows in groups, each as it would alone", async () => {
    const { db } = ledgerOn();
    const { db: counting, counts } = countingDatabase(db);
    const { statements } = counts;
    const ledger = new PaymentLedger(counting);
    const [k1, k2, k3, k4, k5] = [1, 2, 3, 4, 5].map((n) => keyOf(n)) as [
      PaymentKey,
      PaymentKey,
      PaymentKey,
      PaymentKey,
      PaymentKey,
    ];
    // A ledger's first take purges old rows before it (at most hourly): a round trip that, on a server, let the
    // first of the takes below arrive after the others' group had gone, a third group. Done first, apart.
    const first = keyOf(9);
    expect(await ledger.take(first, RESOURCE)).toBe(true);
    await ledger.finish(first, "released");
    statements.length = 0;
    // Duplicates within one group: the row goes to the first of them.
    const taken = await Promise.all([k1, k2, k3, k2, k4, k5, k5].map((k) => ledger.take(k, RESOURCE)));
    expect(taken).toEqual([true, true, true, false, true, true, false]);
    // Made in one turn: one group.
    expect(statements.filter((s) => s.startsWith("INSERT INTO merchant_payments")).length).toBe(1);
    await Promise.all([
      ledger.finish(k1, "settled"),
      ledger.finish(k2, "released"),
      ledger.finish(k3, "unsettled"),
      ledger.finish(k4, "failed"),
      ledger.finish(k5, "released"),
    ]);
    expect(statements.filter((s) => s.startsWith("WITH done AS")).length).toBe(1);
    expect(await states(db)).toEqual(["1:settled", "3:unsettled", "4:failed"]);
    const { rows } = await db.query<{ finished: boolean }>(
      "SELECT bool_and(finished_at IS NOT NULL) AS finished FROM merchant_payments",
    );
    expect(rows[0]?.finished).toBe(true);
    // Released rows can be taken again; finished ones cannot.
    expect(await Promise.all([k2, k5, k1].map((k) => ledger.take(k, RESOURCE)))).toEqual([true, true, false]);
  });

  it("groups the rows of requests that arrive in one turn, and commits a lone one with no timer to wait for", async () => {
    const { db } = ledgerOn();
    const { db: counting, counts } = countingDatabase(db);
    const ledger = new PaymentLedger(counting);
    // A ledger's first take purges old rows first (at most hourly): done apart.
    await ledger.take(keyOf(99), RESOURCE);
    await ledger.finish(keyOf(99), "released");
    counts.statements.length = 0;
    counts.commits = 0;
    // Four requests whose data came in together: each its own callback of the event loop, taking its row. PGlite
    // runs a statement synchronously, so a commit started at once would have taken each alone.
    const keys = [1, 2, 3, 4].map((n) => keyOf(n));
    const taken = await new Promise<Promise<boolean>[]>((resolve) => {
      const takes: Promise<boolean>[] = [];
      for (const key of keys) {
        setImmediate(() => {
          takes.push(ledger.take(key, RESOURCE));
          if (takes.length === keys.length) resolve(takes);
        });
      }
    });
    expect(await Promise.all(taken)).toEqual([true, true, true, true]);
    expect(counts.commits).toBe(1);
    // Each finished by its own callback too: one statement.
    await new Promise<void>((resolve) => {
      let done = 0;
      for (const key of keys) {
        setImmediate(() => {
          void ledger.finish(key, "settled").then(() => {
            if (++done === keys.length) resolve();
          });
        });
      }
    });
    expect(counts.commits).toBe(2);
    expect(await states(db)).toEqual(["1:settled", "2:settled", "3:settled", "4:settled"]);

    // Alone, with timers that never fire: committed all the same, so nothing waited for a timer.
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval"] });
    try {
      expect(await ledger.take(keyOf(5), RESOURCE)).toBe(true);
      await ledger.finish(keyOf(5), "settled");
    } finally {
      vi.useRealTimers();
    }
    expect(counts.commits).toBe(4);
    // Committed: another connection (a server's pool) sees it.
    expect(await states(db)).toContain("5:settled");
  });

  it("fails only the request whose row the database refuses for its own values, grouped or not", async () => {
    const { db, ledger } = ledgerOn();
    await ledger.take(keyOf(9), RESOURCE);
    // A validBefore past PostgreSQL's timestamps (an authorization may say any uint256): its row cannot be written.
    const far = keyOf(2, 1000n, 1e30);
    const taken = await Promise.allSettled([keyOf(1), far, keyOf(3)].map((k) => ledger.take(k, RESOURCE)));
    expect(taken.map((t) => (t.status === "fulfilled" ? t.value : "refused"))).toEqual([
      true,
      "refused",
      true,
    ]);
    expect(await states(db)).toEqual(["1:running", "3:running", "9:running"]);
  });

  it("fails every request of a group the database fails, and records none of them", async () => {
    const { db } = ledgerOn();
    let failing = false;
    const flaky: Database = {
      ...db,
      query: (sql, params) =>
        failing ? Promise.reject(new Error("Connection terminated unexpectedly")) : db.query(sql, params),
    };
    const ledger = new PaymentLedger(flaky);
    const keys = [1, 2, 3].map((n) => keyOf(n));
    expect(await Promise.all(keys.map((k) => ledger.take(k, RESOURCE)))).toEqual([true, true, true]);
    failing = true;
    const finished = await Promise.allSettled(keys.map((k) => ledger.finish(k, "settled")));
    expect(finished.map((f) => f.status)).toEqual(["rejected", "rejected", "rejected"]);
    const more = await Promise.allSettled([4, 5].map((n) => ledger.take(keyOf(n), RESOURCE)));
    expect(more.map((f) => f.status)).toEqual(["rejected", "rejected"]);
    failing = false;
    // Still running, as the requests were told; and the rows the failed takes never wrote are free.
    expect(await states(db)).toEqual(["1:running", "2:running", "3:running"]);
    expect(await ledger.take(keyOf(4), RESOURCE)).toBe(true);
  });

  it("reserves only what the payer's balance covers on top of its payments in flight", async () => {
    const { db, ledger } = ledgerOn();
    let reads = 0;
    const funds = async () => {
      reads += 1;
      return { balance: 2500n, used: new Set<string>() };
    };
    const arrivedAt = Date.now();

    // Nothing in flight: verification has just shown the balance covers this one, so it is not read.
    expect(await ledger.reserve(keyOf(1), RESOURCE, arrivedAt, funds)).toEqual({ status: "taken" });
    expect(reads).toBe(0);
    expect(await ledger.reserve(keyOf(1), RESOURCE, arrivedAt, funds)).toEqual({ status: "in_use" });

    // Twenty at once against 2500 units with 1000 in flight: exactly one more fits.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => ledger.reserve(keyOf(100 + i), RESOURCE, arrivedAt, funds)),
    );
    expect(results.filter((r) => r.status === "taken")).toHaveLength(1);
    const refused = results.find((r) => r.status === "insufficient");
    expect(refused).toEqual({ status: "insufficient", balance: 2500n, inFlight: 2000n });

    // A released payment no longer counts; an unsettled one does until its authorization expires.
    const second = results.findIndex((r) => r.status === "taken");
    await ledger.finish(keyOf(100 + second), "released");
    expect((await ledger.reserve(keyOf(200), RESOURCE, arrivedAt, funds)).status).toBe("taken");
    await ledger.finish(keyOf(200), "unsettled");
    expect((await ledger.reserve(keyOf(201), RESOURCE, arrivedAt, funds)).status).toBe("insufficient");
    await db.query(
      "UPDATE merchant_payments SET valid_before = now() - interval '1 second' WHERE nonce = $1",
      [keyOf(200).nonce],
    );
    expect((await ledger.reserve(keyOf(201), RESOURCE, arrivedAt, funds)).status).toBe("taken");
  });

  it("reserves a channel's voucher without the wallet: it spends escrowed money, and never counts against the wallet", async () => {
    const { ledger } = ledgerOn();
    let reads = 0;
    const funds = async () => {
      reads += 1;
      return { balance: 1000n, used: new Set<string>() };
    };
    const arrivedAt = Date.now();
    const voucher = (n: number): PaymentKey => ({
      payer: PAYER,
      nonce: `${ESCROWED_NONCE_PREFIX}0xchannel:${n}000:request-${n}`,
      validBefore: Math.floor(arrivedAt / 1000) + 3600,
      amount: 5000n,
      escrowed: true,
    });
    // Vouchers worth more than the wallet holds: each reserved, the wallet never read.
    expect((await ledger.reserve(voucher(1), RESOURCE, arrivedAt, funds)).status).toBe("taken");
    expect((await ledger.reserve(voucher(2), RESOURCE, arrivedAt, funds)).status).toBe("taken");
    expect(reads).toBe(0);
    // A wallet payment beside them is judged on the wallet alone: 1000 covers it, the vouchers' 10000 aside.
    expect((await ledger.reserve(keyOf(1, 1000n), RESOURCE, arrivedAt, funds)).status).toBe("taken");
    expect((await ledger.reserve(keyOf(2, 1n), RESOURCE, arrivedAt, funds)).status).toBe("insufficient");
    // The unpaid limit holds for vouchers as for any payment.
    for (let n = 10; n < 10 + UNPAID_LIMIT; n++) {
      await ledger.reserve(voucher(n), RESOURCE, arrivedAt, funds);
      await ledger.finish(voucher(n), "abandoned");
    }
    expect((await ledger.reserve(voucher(99), RESOURCE, arrivedAt, funds)).status).toBe("unpaid");
  });

  it("counts a settled payment only while the chain, at the block its balance is read, has not used it", async () => {
    const { db, ledger } = ledgerOn();
    let used = new Set<string>();
    const asked: string[][] = [];
    const funds = async (_payer: string, nonces: readonly string[]) => {
      asked.push([...nonces]);
      return { balance: 1500n, used };
    };
    await ledger.reserve(keyOf(1), RESOURCE, Date.now(), funds);
    await ledger.finish(keyOf(1), "settled");

    // A lagging node: the balance (1500) does not show the settled 1000 yet, whose nonce is unused there.
    expect((await ledger.reserve(keyOf(2), RESOURCE, Date.now(), funds)).status).toBe("insufficient");
    expect(asked.at(-1)).toEqual([keyOf(1).nonce]);
    // The node has caught up: the nonce is used, so the balance already shows it.
    used = new Set([keyOf(1).nonce]);
    expect((await ledger.reserve(keyOf(2), RESOURCE, Date.now(), funds)).status).toBe("taken");

    // Long settled, and settled before the request arrived: no longer asked about.
    await db.query(
      `UPDATE merchant_payments SET finished_at = now() - interval '${SETTLED_RECHECK_SECONDS + 1} seconds'`,
    );
    await ledger.finish(keyOf(2), "released");
    expect(await ledger.reserve(keyOf(3), RESOURCE, Date.now(), funds)).toEqual({ status: "taken" });
    expect(asked).toHaveLength(2);
    // A settlement finished after the request arrived is asked about, however long ago that was.
    await ledger.finish(keyOf(3), "released");
    expect((await ledger.reserve(keyOf(4), RESOURCE, Date.now() - 10 * 60_000, funds)).status).toBe("taken");
    expect(asked.at(-1)).toEqual([keyOf(1).nonce]);
  });
});
