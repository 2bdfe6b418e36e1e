import { afterEach, describe, expect, it } from "vitest";
import { migrate } from "../../../src/common/db/index.ts";
import { PLATFORM_MIGRATIONS } from "../../../src/merchant-kit/migrations.ts";
import { LOCK_RETENTION_SECONDS, ReplayLocks } from "../../../src/merchant-kit/payments/replay-lock.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../helpers/db.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe.each(DATABASE_KINDS)("replay locks on %s", (kind) => {
  it("let one of many concurrent takers through, give the lock back on release, and expire old ones", async () => {
    const { db, close } = await openTestDatabase(kind);
    closers.push(close);
    await migrate(db, "platform", PLATFORM_MIGRATIONS);
    let now = Date.now();
    const locks = new ReplayLocks(db, () => now);
    const key = {
      payer: "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" as const,
      nonce: `0x${"11".repeat(32)}`,
      validBefore: Math.floor(now / 1000) + 60,
    };

    const taken = await Promise.all(Array.from({ length: 8 }, () => locks.take(key, "https://a.test/x")));
    expect(taken.filter(Boolean)).toHaveLength(1);
    // Another payer's same nonce is another authorization.
    expect(
      await locks.take({ ...key, payer: "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }, "https://a.test/x"),
    ).toBe(true);
    // The nonce is hex: its case does not make a new key.
    expect(
      await locks.take({ ...key, nonce: key.nonce.toUpperCase().replace("0X", "0x") }, "https://a.test/x"),
    ).toBe(false);

    await locks.release(key);
    expect(await locks.take(key, "https://a.test/x")).toBe(true);

    // Kept past validBefore, dropped once the retention has passed (the purge runs at most hourly).
    now += (LOCK_RETENTION_SECONDS + 3600) * 1000;
    await locks.take(
      { ...key, nonce: `0x${"22".repeat(32)}`, validBefore: Math.floor(now / 1000) + 60 },
      "https://a.test/x",
    );
    const { rows } = await db.query<{ nonce: string }>(
      "SELECT nonce FROM platform_replay_locks ORDER BY nonce",
    );
    expect(rows.map((r) => r.nonce)).toEqual([`0x${"22".repeat(32)}`]);
  });
});
