/**
 * The reference page's console: per operation a form prefilled with the catalogue's example that sends
 * the request from the browser and shows the answer. Unpaid, that is the 402 with its payment
 * requirements decoded; with a browser wallet (`window.ethereum`, EIP-1193) the page signs the EIP-3009
 * authorization (`eth_signTypedData_v4`) and sends it as x402 `PAYMENT-SIGNATURE`, then shows the answer
 * and the settlement. The script is inline and talks only to this host and the wallet.
 */
import { escapeText } from "../common/html.ts";
import type { JsonSchema } from "./json-schema.ts";
import type { OpenApiOperation } from "./openapi.ts";

/** The form of one operation. */
export function tryItForm(path: string, method: string, op: OpenApiOperation): string {
  const id = escapeText(op.operationId);
  const form = op.requestBody?.content["multipart/form-data"];
  const fields =
    method === "get"
      ? (op.parameters ?? [])
          // The payment header is the page's to send (the wallet button), not a field.
          .filter((p) => p.in !== "header")
          .map(
            (p) =>
              `<label>${escapeText(p.name)}${p.required ? " (required)" : ""} <input name="${escapeText(p.name)}"${p.in === "path" ? ' data-in="path"' : ""} value="${escapeText(p.example === undefined ? "" : String(p.example))}"></label>`,
          )
          .join("\n")
      : form
        ? formFields(form.schema, (form.example ?? {}) as Record<string, unknown>)
        : `<label>Body (JSON) <textarea name="body" rows="6" spellcheck="false">${escapeText(
            JSON.stringify(op.requestBody?.content["application/json"]?.example ?? {}, null, 2),
          )}</textarea></label>`;
  return `<form class="try" data-method="${escapeText(method.toUpperCase())}" data-path="${escapeText(path)}"${form ? ' data-body="multipart"' : ""} aria-label="Try ${id}">
${fields}
<p><button type="submit">Send without paying</button> <button type="button" class="pay" hidden>Pay with your wallet and send</button></p>
<output aria-live="polite"></output>
</form>`;
}

/** A multipart body's fields: a file picker for each binary property, a text box for the others. */
function formFields(schema: JsonSchema, example: Record<string, unknown>): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties)
    .map(([name, property]) => {
      const label = `${escapeText(name)}${required.has(name) ? " (required)" : ""}`;
      if (property.format === "binary")
        return `<label>${label} <input type="file" name="${escapeText(name)}"></label>`;
      const value = example[name] === undefined ? "" : String(example[name]);
      return `<label>${label} <input name="${escapeText(name)}" value="${escapeText(value)}"></label>`;
    })
    .join("\n");
}

/** The page's one script: sends the forms, decodes 402s, pays through the browser wallet. */
export const TRY_IT_SCRIPT = `<script>
(() => {
  const utf8 = new TextEncoder(), text = new TextDecoder();
  const toBase64 = (s) => { let bin = ""; for (const b of utf8.encode(s)) bin += String.fromCharCode(b); return btoa(bin); };
  const fromBase64 = (s) => text.decode(Uint8Array.from(atob(s), (c) => c.charCodeAt(0)));
  const hex = (bytes) => "0x" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const show = (form, lines) => { const pre = document.createElement("pre"); pre.textContent = lines.join("\\n"); form.querySelector("output").replaceChildren(pre); };

  function call(form) {
    const method = form.dataset.method;
    let path = form.dataset.path;
    for (const input of form.querySelectorAll("input[data-in=path]")) path = path.replace("{" + input.name + "}", encodeURIComponent(input.value));
    const url = new URL(path, location.href);
    if (method === "GET") {
      for (const input of form.querySelectorAll("input:not([data-in=path])")) if (input.value !== "") url.searchParams.set(input.name, input.value);
      return [url, { method }];
    }
    if (form.dataset.body === "multipart") {
      const data = new FormData();
      for (const input of form.querySelectorAll("input")) {
        if (input.type === "file") { if (input.files[0]) data.append(input.name, input.files[0]); }
        else if (input.value !== "") data.append(input.name, input.value);
      }
      return [url, { method, body: data }];
    }
    return [url, { method, headers: { "content-type": "application/json" }, body: form.querySelector("textarea").value }];
  }

  async function send(form, extraHeaders) {
    const [url, init] = call(form);
    init.headers = { ...(init.headers || {}), ...extraHeaders };
    const response = await fetch(url, init);
    const body = await response.text();
    const lines = [response.status + " " + response.statusText];
    let required;
    const requiredHeader = response.headers.get("PAYMENT-REQUIRED");
    if (response.status === 402 && requiredHeader) {
      required = JSON.parse(fromBase64(requiredHeader));
      const accept = required.accepts.find((a) => a.scheme === "exact") || required.accepts[0];
      lines.push("Payment required: " + accept.amount + " atomic units of " + accept.asset + " on " + accept.network + " to " + accept.payTo);
      if (required.error) lines.push("Reason: " + required.error);
    }
    const settled = response.headers.get("PAYMENT-RESPONSE");
    if (settled) lines.push("Settlement: " + fromBase64(settled));
    lines.push("", body);
    show(form, lines);
    return required;
  }

  async function pay(form, required) {
    const ethereum = window.ethereum;
    // The wallet signs an EIP-3009 authorization: not the exact option through Permit2.
    const accept = required.accepts.find((a) => a.scheme === "exact" && [undefined, "eip3009"].includes((a.extra || {}).assetTransferMethod));
    if (!accept) throw new Error("no exact-scheme requirement this page can pay (it signs EIP-3009 only)");
    const [from] = await ethereum.request({ method: "eth_requestAccounts" });
    const chainId = Number(accept.network.split(":")[1]);
    const authorization = {
      from, to: accept.payTo, value: String(accept.amount), validAfter: "0",
      validBefore: String(Math.floor(Date.now() / 1000) + accept.maxTimeoutSeconds),
      nonce: hex(crypto.getRandomValues(new Uint8Array(32))),
    };
    const typedData = {
      types: {
        EIP712Domain: [{ name: "name", type: "string" }, { name: "version", type: "string" }, { name: "chainId", type: "uint256" }, { name: "verifyingContract", type: "address" }],
        TransferWithAuthorization: [{ name: "from", type: "address" }, { name: "to", type: "address" }, { name: "value", type: "uint256" }, { name: "validAfter", type: "uint256" }, { name: "validBefore", type: "uint256" }, { name: "nonce", type: "bytes32" }],
      },
      primaryType: "TransferWithAuthorization",
      domain: { name: accept.extra.name, version: accept.extra.version, chainId, verifyingContract: accept.asset },
      message: authorization,
    };
    const signature = await ethereum.request({ method: "eth_signTypedData_v4", params: [from, JSON.stringify(typedData)] });
    const payment = { x402Version: required.x402Version, resource: required.resource, accepted: accept, payload: { authorization, signature }, extensions: required.extensions };
    await send(form, { "PAYMENT-SIGNATURE": toBase64(JSON.stringify(payment)) });
  }

  for (const form of document.querySelectorAll("form.try")) {
    const payButton = form.querySelector("button.pay");
    let required;
    const fail = (error) => show(form, ["Error: " + (error && error.message ? error.message : error)]);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send(form, {}).then((r) => { required = r; payButton.hidden = !(r && window.ethereum); }, fail);
    });
    payButton.addEventListener("click", () => { if (required) pay(form, required).catch(fail); });
  }
})();
</script>`;
