/**
 * `x402-merchants verify`: reports written to files, checked against a devnet where their week is attested
 * (src/reports/attest/verify.ts's own tests try each way a report fails; here, what the command prints and
 * how it exits). One devnet for the file, mined on demand; the week is attested once, by the first test.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type Devnet, startDevnet } from "../../src/chain/devnet/index.ts";
import { type Attested, easOn, once, weekOf, withProofs } from "../helpers/eas.ts";
import { runMain } from "../helpers/in-process.ts";
import { makeReport, wallet as repeated } from "../reports/fixtures.ts";

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
});
afterAll(() => devnet?.stop());

/** Two reports of a week attested under the week schema, each with its attestation field; and the attester. */
const week = once(async () => {
  const eas = easOn(devnet, (devnet.buyers[0] as { privateKey: Hex }).privateKey);
  await eas.register();
  const reports = ["a", "b"].map((digit) => makeReport({ address: repeated(digit), frozen: true }));
  const { tree, statement } = weekOf(reports);
  const made = await eas.attest(statement);
  return { uid: made.uid, attester: eas.attester, reports: withProofs(reports, tree, made, eas.attester) };
});

/** A fresh directory with `files` (name: JSON value, or text as it is) written in it; removed after the test. */
function written(files: Record<string, unknown>): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-verify-"));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return Object.fromEntries(
    Object.entries(files).map(([name, content]) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
      return [name, file];
    }),
  );
}

const OK_LINE =
  /^ok (0x[0-9a-f]{40}) week ending at block (\d+), attested by (0x[0-9a-f]{40}) at (\S+Z) \(uid (0x[0-9a-f]{64})\)$/;

describe("x402-merchants verify", () => {
  it("prints a line per report verified, and stops at the first that does not verify, naming its file", async () => {
    const { reports, attester, uid } = await week();
    const [report, second] = reports as [Attested, Attested];
    const files = written({
      "a.json": report,
      "b.json": second,
      "altered.json": { ...report, name: "other.example" },
    });
    const rpc = ["--rpc", devnet.rpc];

    const ok = await runMain(["verify", files["a.json"] as string, files["b.json"] as string, ...rpc]);
    expect(ok).toMatchObject({ code: 0, stderr: "" });
    const lines = ok.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines.map((line) => line.match(OK_LINE)?.slice(1, 4))).toEqual([
      [repeated("a"), "30302400", attester],
      [repeated("b"), "30302400", attester],
    ]);
    expect(lines[0]).toContain(`(uid ${uid})`);

    const altered = await runMain([
      "verify",
      files["a.json"] as string,
      files["altered.json"] as string,
      ...rpc,
    ]);
    expect(altered.code).toBe(1);
    expect(altered.stdout).toBe(`${lines[0]}\n`);
    expect(altered.stderr).toBe(
      `x402-merchants: ${files["altered.json"]}: the report does not prove against the attested root: a field was changed or it is not the attested report\n`,
    );

    // Only the attester given; and the same as JSON lines.
    const stranger = await runMain([
      "verify",
      files["a.json"] as string,
      ...rpc,
      "--attester",
      repeated("5"),
    ]);
    expect(stranger).toMatchObject({ code: 1, stdout: "" });
    expect(stranger.stderr).toMatch(/^x402-merchants: .*a\.json: attestation 0x[0-9a-f]{64} was made by 0x/);
    const json = await runMain([
      "verify",
      files["a.json"] as string,
      ...rpc,
      "--attester",
      attester,
      "--json",
    ]);
    expect(json).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(json.stdout)).toMatchObject({
      file: files["a.json"],
      address: repeated("a"),
      end_block: 30_302_400,
      attester,
      uid,
    });
  });

  it("refuses a file that is not JSON or not a report in one line, and a usage mistake with exit 2", async () => {
    const files = written({ "text.json": "not json", "empty.json": "{}" });
    const rpc = ["--rpc", "http://127.0.0.1:1"];
    const text = await runMain(["verify", files["text.json"] as string, ...rpc]);
    expect(text).toMatchObject({ code: 1, stdout: "" });
    expect(text.stderr).toMatch(new RegExp(`^x402-merchants: ${files["text.json"]}: not JSON: [^\\n]*\\n$`));
    const empty = await runMain(["verify", files["empty.json"] as string, ...rpc]);
    expect(empty).toMatchObject({ code: 1, stdout: "" });
    expect(empty.stderr).toMatch(
      new RegExp(`^x402-merchants: ${files["empty.json"]}: not a report: [^\\n]*\\n$`),
    );

    const usage: [string[], string][] = [
      [["verify", ...rpc], "verify takes one or more REPORT.json files"],
      [["verify", files["empty.json"] as string], "verify needs --rpc URL"],
      [["verify", "no-such-file.json", ...rpc], "no file no-such-file.json"],
      [
        ["verify", files["empty.json"] as string, "--rpc", "localhost"],
        '--rpc must be an http(s) URL, not "localhost"',
      ],
      [
        ["verify", files["empty.json"] as string, ...rpc, "--attester", "0x12"],
        "--attester must be an address",
      ],
    ];
    for (const [argv, said] of usage) {
      const run = await runMain(argv);
      expect(run, argv.join(" ")).toMatchObject({ code: 2, stdout: "" });
      expect(run.stderr.startsWith(`x402-merchants: ${said}`), run.stderr).toBe(true);
    }
  });
});
