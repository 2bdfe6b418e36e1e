/**
 * `x402-merchants mcp`: the report tools over stdio, spawned as an MCP client spawns its servers (the SDK's
 * own StdioClientTransport). It answers what `report` prints, alone on the store and beside a `serve` that
 * holds it, and writes nothing but JSON-RPC on stdout. What `report` and `leaderboard` print is read in
 * this process (runMain), a CPU-second less each.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it, onTestFinished } from "vitest";
import { addr, checkpoint, END, ndjsonFile, payment, repeat } from "../helpers/data.ts";
import { runMain } from "../helpers/in-process.ts";
import { startCli, TEST_CLI_ENV } from "../helpers/process.ts";

const m1 = addr("cli-mcp-m1");
const m2 = addr("cli-mcp-m2");

async function store(): Promise<string> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-cli-mcp-"));
  const records = [
    ...[1, 2, 3].map((i) => payment({ payer: addr(`cli-mcp-b${i}`), payTo: m1, amount: 1_000_000 * i })),
    ...repeat(12, { payer: addr("cli-mcp-farm"), payTo: m2, amount: 100 }, END - 5_000, END - 100),
    checkpoint(),
  ];
  expect((await runMain(["import", ndjsonFile(records), "--data", data])).code).toBe(0);
  return data;
}

/** The SDK's client of `bin/x402-merchants mcp --data DIR`; every line its stdout carries that is not JSON-RPC is kept. */
async function connect(data: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.resolve("bin/x402-merchants"), "mcp", "--data", data],
    env: { ...(process.env as Record<string, string>), ...TEST_CLI_ENV },
    stderr: "pipe",
  });
  const problems: Error[] = [];
  transport.onerror = (error) => problems.push(error);
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return { client, problems, stderr: () => stderr };
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const [text] = result.content as { text: string }[];
  return {
    isError: result.isError === true,
    structured: result.structuredContent,
    text: JSON.parse(text?.text ?? ""),
  };
}

describe("x402-merchants mcp", () => {
  it("lists the report tools and answers what report prints, alone on the store and beside serve", async () => {
    const data = await store();
    const printed = JSON.parse((await runMain(["report", m1, "--data", data])).stdout);
    const { client, problems, stderr } = await connect(data);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "flagged_wallets",
      "get_evidence",
      "get_leaderboard",
      "get_report",
      "sealed_weeks",
      "search_merchants",
      "wallet_history",
    ]);
    expect((await call(client, "get_report", { address: m1 })).structured).toEqual(printed);
    const unknown = await call(client, "get_report", { address: addr("cli-mcp-nobody") });
    expect(unknown).toMatchObject({ isError: true, text: { error: { code: "unknown_merchant" } } });
    const bad = await call(client, "get_report", { address: "0x12" });
    expect(bad).toMatchObject({ isError: true, text: { error: { code: "bad_address" } } });
    // The flag feed and a wallet's weeks, read here and then from serve: the same answers.
    const farm = addr("cli-mcp-farm");
    const feed = await call(client, "flagged_wallets", { merchant: m2 });
    expect(feed.structured).toMatchObject({
      merchant: m2,
      totals: { wallets: 1, tx: 12 },
      wallets: [{ wallet: farm, merchants: [{ kind: "tiny_repeat" }] }],
    });
    const history = await call(client, "wallet_history", { address: farm });
    expect(history.structured).toMatchObject({
      wallet: farm,
      weeks: [{ merchants: [{ kind: "tiny_repeat" }] }],
    });
    const notMerchant = await call(client, "flagged_wallets", { merchant: addr("cli-mcp-nobody") });
    expect(notMerchant).toMatchObject({ isError: true, text: { error: { code: "unknown_merchant" } } });

    // Between calls the store is free: serve opens it, and the same session then asks serve.
    const serve = startCli(["serve", "--only", "reports", "--port", "0", "--data", data]);
    await serve.line;
    expect(fs.existsSync(path.join(data, "report-service.json"))).toBe(true);
    expect((await call(client, "get_report", { address: m1 })).structured).toEqual(printed);
    expect(await call(client, "get_report", { address: addr("cli-mcp-nobody") })).toEqual(unknown);
    expect(await call(client, "get_report", { address: "0x12" })).toEqual(bad);
    const board = await call(client, "get_leaderboard", {});
    expect(board.structured).toEqual(JSON.parse((await runMain(["leaderboard", "--data", data])).stdout));
    const evidence = await call(client, "get_evidence", { address: m2 });
    expect(evidence.structured).toMatchObject({ address: m2, flags: [{ kind: "tiny_repeat" }] });
    expect((await call(client, "flagged_wallets", { merchant: m2 })).structured).toEqual(feed.structured);
    expect((await call(client, "wallet_history", { address: farm })).structured).toEqual(history.structured);
    expect(await call(client, "flagged_wallets", { merchant: addr("cli-mcp-nobody") })).toEqual(notMerchant);
    const found = await call(client, "search_merchants", { query: m2.slice(2, 20) });
    expect(found.structured).toMatchObject({ unranked: [{ address: m2 }], totals: { merchants: 1 } });

    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    expect(problems).toEqual([]);
    expect(stderr()).not.toMatch(/"level":"(error|fatal)"/);
  }, 180_000);
});
