/**
 * `serve` refusing payments that cannot be payments: a thousand requests with a malformed
 * `PAYMENT-SIGNATURE` each get a 400 JSON error (x402's HTTP transport: a malformed payload is a 400), and the log stays a
 * handful of one-line JSON records instead of a stack trace per request.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { MALFORMED_LOG_LIMIT } from "../../src/merchant-kit/payments/malformed.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { listenSupportedOnly } from "../helpers/merchant.ts";
import { startCli } from "../helpers/process.ts";
import { newMerchant } from "../helpers/x402.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** Not base64, base64 of what is not JSON, JSON that is not an object: every way a header is no payment. */
const MALFORMED = [
  "not base64!",
  "%%%",
  "a",
  b64("abc"),
  b64('{"x402Version":2,'),
  b64("[1,2]"),
  b64("42"),
  b64("null"),
];

const REQUESTS = 1000;
const CONCURRENCY = 20;

describe("serve, sent malformed payments", () => {
  it("answers each with a 400 JSON error and logs a bounded number of single lines", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    const { dataDir: data, cleanup } = await isolatedDatabaseOptions("pglite");
    onTestFinished(cleanup);
    const serve = startCli(["serve", "--only", "utility", "--data", data], {
      X402M_FACILITATOR_URL: facilitator.url,
      X402M_UTILITY_PAY_TO: newMerchant(),
      X402M_UTILITY_PORT: "0",
      // A thousand requests from this machine: the unpaid limit (test/common/rate-limit.test.ts) would refuse most.
      X402M_UNPAID_LOOPBACK: "exempt",
    });
    const { utility } = JSON.parse(await serve.line) as { utility: string };
    const logBefore = serve.stderr().length;

    const answers: { status: number; type: string; code: unknown }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) {
          const header = MALFORMED[next++ % MALFORMED.length] as string;
          const response = await fetch(`${utility}/api/calc?expr=1%2B1`, {
            headers: { "PAYMENT-SIGNATURE": header },
          });
          const body = (await response.json().catch(() => undefined)) as
            | { error?: { code?: unknown; message?: unknown } }
            | undefined;
          answers.push({
            status: response.status,
            type: response.headers.get("content-type") ?? "",
            code: body?.error?.code,
          });
        }
      }),
    );

    expect(answers).toHaveLength(REQUESTS);
    const wrong = answers.filter(
      (a) =>
        a.status !== 400 || !a.type.startsWith("application/json") || a.code !== "invalid_payment_signature",
    );
    expect(wrong.slice(0, 3), `${wrong.length} answers were not the 400 JSON error`).toEqual([]);

    // The request log's one line per request (an access log is as long as the traffic: its lines are at info,
    // and an operator who wants fewer sets X402M_LOG_LEVEL=warn), written as each answer is sent.
    const isRequestLine = (l: string) => l.includes('"msg":"request"');
    const logLines = () =>
      serve
        .stderr()
        .slice(logBefore)
        .split("\n")
        .filter((l) => l.length > 0);
    await expect.poll(() => logLines().filter(isRequestLine).length).toBe(REQUESTS);
    const log = logLines()
      .filter((l) => !isRequestLine(l))
      .join("\n");
    const lines = log.split("\n").filter((l) => l.length > 0);
    // The warnings: the limit's lines, and at most one saying how many were left out.
    expect(lines.length, log.slice(0, 2000)).toBeLessThanOrEqual(MALFORMED_LOG_LIMIT.lines + 1);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines[0]).toContain("malformed PAYMENT-SIGNATURE");

    // A well-formed unpaid request is still asked to pay, as before.
    expect((await fetch(`${utility}/api/calc?expr=1%2B1`)).status).toBe(402);
  }, 120_000);
});
