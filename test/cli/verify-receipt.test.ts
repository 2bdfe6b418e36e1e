/**
 * `x402-merchants verify-receipt`: a receipt and its charge written to a file as a buyer keeps them (the
 * `PAYMENT-RESPONSE` header of an upto call), signed here as a merchant's host signs them (payments/receipts/receipts.ts;
 * test/merchant-kit/payments/receipts/receipts.test.ts has them signed by a host on a devnet). What the command prints,
 * and how it exits for a receipt that verifies, one altered, one signed by another key, and a usage mistake.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodePaymentResponseHeader } from "@x402/core/http";
import { createReceiptEIP712, OFFER_RECEIPT } from "@x402/extensions/offer-receipt";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, describe, expect, it } from "vitest";
import { requestHash } from "../../src/merchant-kit/payments/receipts/charge.ts";
import { signCharge } from "../../src/merchant-kit/payments/receipts/receipts.ts";
import { runMain } from "../helpers/in-process.ts";

const merchant = privateKeyToAccount(generatePrivateKey());
const payer = privateKeyToAccount(generatePrivateKey()).address;
const resourceUrl = "https://api.example/v1/chat/completions";
const transaction = `0x${"ab".repeat(32)}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-verify-receipt-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The upto call's settlement as its `PAYMENT-RESPONSE` carries it, receipt and charge signed by `by`. */
async function settlement(by = merchant) {
  const sign = (data: Parameters<typeof by.signTypedData>[0]) => by.signTypedData(data);
  const receipt = await createReceiptEIP712(
    { resourceUrl, payer, network: "eip155:8453", transaction },
    sign as Parameters<typeof createReceiptEIP712>[1],
  );
  const charge = await signCharge(by, {
    version: 1,
    resourceUrl,
    network: "eip155:8453",
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    payTo: "0x209693bc6afc0c5328ba36faf03c514ef312287c",
    payer,
    scheme: "upto",
    amount: "1234",
    ceiling: "10000",
    requestHash: await requestHash(new Request(resourceUrl, { method: "POST", body: '{"messages":[]}' })),
    transaction,
    channel: "",
    issuedAt: receipt.payload.issuedAt,
  });
  return {
    success: true,
    transaction,
    network: "eip155:8453" as const,
    payer,
    extensions: { [OFFER_RECEIPT]: { info: { receipt, charge } } },
  };
}

function written(name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

describe("x402-merchants verify-receipt", () => {
  it("prints one line for a receipt that verifies: the signer, the amount beside its ceiling, the request", async () => {
    const file = written("header.txt", encodePaymentResponseHeader(await settlement()));
    const run = await runMain(["verify-receipt", file, "--signer", merchant.address.toLowerCase()]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(
      new RegExp(
        `^ok ${merchant.address} charged ${payer} 1234 of at most 10000 \\(upto, atomic units of 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913\\) for ${resourceUrl}, request 0x[0-9a-f]{64}, transaction ${transaction}, issued \\S+Z\\n$`,
      ),
    );
    // Without --signer it verifies who signed, and says that it did not check who that is.
    const json = await runMain([
      "verify-receipt",
      written("decoded.json", JSON.stringify(await settlement())),
      "--json",
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      signer: merchant.address,
      signer_trusted: false,
      charge: { scheme: "upto", amount: "1234", ceiling: "10000" },
    });
  });

  it("refuses an altered charge, or another key than --signer, with the reason on one line and exit 1", async () => {
    const paid = await settlement();
    const info = paid.extensions[OFFER_RECEIPT].info;
    const altered = {
      ...info,
      charge: { ...info.charge, payload: { ...info.charge.payload, amount: "12" } },
    };
    const file = written("altered.json", JSON.stringify(altered));
    const run = await runMain(["verify-receipt", file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      new RegExp(
        `^x402-merchants: ${file}: the charge is signed by 0x[0-9a-fA-F]{40}, the receipt by ${merchant.address}\\n$`,
      ),
    );
    const other = written(
      "other.json",
      JSON.stringify(await settlement(privateKeyToAccount(generatePrivateKey()))),
    );
    const signer = await runMain(["verify-receipt", other, "--signer", merchant.address]);
    expect(signer.code).toBe(1);
    expect(signer.stderr).toMatch(/: signed by 0x[0-9a-fA-F]{40}, not by 0x/);
    expect((await runMain(["verify-receipt", written("nothing.json", "{}")])).stderr).toMatch(
      /no signed receipt/,
    );
  });

  it("refuses a --signer that is no address, or a missing FILE, as usage mistakes (exit 2)", async () => {
    expect((await runMain(["verify-receipt", "x.json", "--signer", "merchant"])).code).toBe(2);
    expect((await runMain(["verify-receipt"])).code).toBe(2);
    expect((await runMain(["verify-receipt", path.join(dir, "absent.json")])).code).toBe(2);
  });
});
