import { escapeText } from "../common/html.ts";
import { FAVICON_LINKS } from "./favicon.ts";
import type { OpenApiDocument, OpenApiOperation } from "./openapi.ts";
import { TRY_IT_SCRIPT, tryItForm } from "./try-it.ts";

/** A POSIX shell single-quoted word. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The "try it" line: the call as curl, which answers 402 with the payment requirements until paid. */
export function curlLine(server: string, path: string, method: string, op: OpenApiOperation): string {
  if (method === "get") {
    return `curl -i ${shellQuote(`${server}${examplePath(path, op)}${exampleQuery(op)}`)}`;
  }
  const form = op.requestBody?.content["multipart/form-data"];
  if (form) {
    // curl -F: `name=@path` uploads a file, `name=value` sends a field.
    const fields = Object.entries((form.example ?? {}) as Record<string, unknown>).map(([name, value]) => {
      const file = /^<[^>]* file (.+)>$/.exec(String(value));
      return `-F ${shellQuote(file ? `${name}=@${file[1]}` : `${name}=${String(value)}`)}`;
    });
    return `curl -i -X POST ${fields.join(" ")} ${shellQuote(`${server}${path}`)}`;
  }
  const body = JSON.stringify(op.requestBody?.content["application/json"]?.example ?? {});
  return `curl -i -X POST -H 'content-type: application/json' -d ${shellQuote(body)} ${shellQuote(`${server}${path}`)}`;
}

/** A path with its parameters filled in from the example: `/pay/{agent_id}` -> `/pay/alice`. */
export function examplePath(path: string, op: OpenApiOperation): string {
  return path.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const value = op.parameters?.find((p) => p.in === "path" && p.name === name)?.example;
    return value === undefined ? whole : encodeURIComponent(String(value));
  });
}

function exampleQuery(op: OpenApiOperation): string {
  const pairs = (op.parameters ?? [])
    .filter((p) => p.in === "query" && p.example !== undefined)
    .map((p): [string, string] => [p.name, String(p.example)]);
  const query = new URLSearchParams(pairs).toString();
  return query ? `?${query}` : "";
}

function parametersTable(op: OpenApiOperation): string {
  // The payment header is said by "how to pay"; the table is the query's and the path's.
  const rows = (op.parameters ?? [])
    .filter((p) => p.in !== "header")
    .map(
      (p) =>
        `<tr><th scope="row"><code>${escapeText(p.name)}</code></th><td>${p.required ? "yes" : "no"}</td>` +
        `<td><code>${escapeText(String(p.schema.type ?? "any"))}</code></td><td>${escapeText(p.description ?? "")}</td></tr>`,
    );
  if (rows.length === 0) return "";
  return `<table><caption>Query parameters</caption><thead><tr><th scope="col">name</th><th scope="col">required</th><th scope="col">type</th><th scope="col">meaning</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** "$0.001 per call", "up to $0.04 per call" (metered, upto), "$0.018 per call, or metered up to it" or "free". */
function priceLabel(op: OpenApiOperation): string {
  const info = op["x-payment-info"];
  if (!info) return "free";
  if (info.price.mode === "dynamic") return `up to $${info.price.max} per call`;
  const metered = info.protocols.some((p) => p.x402.scheme === "upto");
  return `$${info.price.amount} per call${metered ? ", or metered up to it" : ""}`;
}

/** The sentence on payment channels, for an operation that takes them. */
function channelSentence(op: OpenApiOperation): string {
  if (!op["x-payment-info"]?.protocols.some((p) => p.x402.scheme === "batch-settlement")) return "";
  return " A payment channel (x402's batch-settlement, for example @x402/fetch with @x402/evm's batch-settlement client) deposits once and then pays each call with a signed voucher, no transaction per call; its unclaimed balance comes back with a refund voucher sent to GET /channels/refund.";
}

/** The sentence on paying exact through Permit2, for an operation that takes it. */
function exactPermit2Sentence(op: OpenApiOperation): string {
  const exact = (op["x-payment-info"]?.protocols ?? []).filter((p) => p.x402.scheme === "exact");
  const permit2 = exact.filter((p) => p.x402.extra?.assetTransferMethod === "permit2");
  if (permit2.length === 0) return "";
  const eip3009 = permit2.length < exact.length;
  return ` ${eip3009 ? "The listed price may also be paid" : "The listed price is paid"} through Permit2: the 402's exact option with assetTransferMethod permit2 (for example @x402/evm's exact client choosing it; the wallet having approved Permit2 once), for wallets that sign Permit2 rather than EIP-3009.${eip3009 ? "" : " This operation takes no EIP-3009 authorization: this page's browser wallet cannot pay it."}`;
}

function howToPay(op: OpenApiOperation): string {
  if (!op["x-payment-info"]) return "Free: no payment.";
  return `${schemesHowToPay(op)}${exactPermit2Sentence(op)}${channelSentence(op)}`;
}

function schemesHowToPay(op: OpenApiOperation): string {
  const info = op["x-payment-info"];
  if (!info) return "Free: no payment.";
  const unpaid =
    "Without payment the answer is 402 with the requirements in the PAYMENT-REQUIRED header; an x402 client";
  const upto =
    "with the upto scheme (for example @x402/fetch with @x402/evm's upto client, the wallet having approved Permit2 once) authorises the maximum, pays what the call cost and retries";
  if (info.price.mode === "dynamic") {
    return `${unpaid} ${upto}. This page's browser wallet pays fixed prices only.`;
  }
  if (info.protocols.some((p) => p.x402.scheme === "upto")) {
    return `${unpaid} pays the listed price with the exact scheme, or ${upto}. In this page, a browser wallet can pay the listed price.`;
  }
  return `${unpaid} (for example @x402/fetch) pays and retries. In this page, a browser wallet can pay: it signs a USDC transfer authorization for exactly the price, which the merchant's facilitator settles.`;
}

function section(server: string, path: string, method: string, op: OpenApiOperation): string {
  const body = op.requestBody?.content["application/json"] ?? op.requestBody?.content["multipart/form-data"];
  const bodyKind = op.requestBody?.content["multipart/form-data"] ? "multipart form" : "JSON";
  const output = op.responses["200"]?.content?.["application/json"]?.example;
  const answerTypes = Object.keys(op.responses["200"]?.content ?? {});
  const answers = answerTypes.some((type) => type !== "application/json")
    ? `<p>Answers with ${answerTypes.map((type) => `<code>${escapeText(type)}</code>`).join(", ")}.</p>`
    : "";
  return `<section id="${escapeText(op.operationId)}" aria-labelledby="${escapeText(op.operationId)}-title">
<h2 id="${escapeText(op.operationId)}-title"><span class="method">${method.toUpperCase()}</span> <code>${escapeText(path)}</code> <span class="price">${escapeText(priceLabel(op))}</span></h2>
<p>${escapeText(op.description.split("\n")[0] ?? "")}</p>
${parametersTable(op)}
${body ? `<h3>Request body (${bodyKind})</h3><pre><code>${escapeText(JSON.stringify(body.schema, null, 2))}</code></pre>` : ""}
<h3>Try it</h3>
${tryItForm(path, method, op)}
<p>From a shell:</p>
<pre><code>${escapeText(curlLine(server, path, method, op))}</code></pre>
<p>${escapeText(howToPay(op))}</p>
${answers}
${output === undefined ? "" : `<h3>Example answer</h3><pre><code>${escapeText(JSON.stringify(output, null, 2))}</code></pre>`}
</section>`;
}

/**
 * The interactive API reference, rendered on the server from the OpenAPI document: every operation with
 * its price, parameters, a console to call it (and pay with a browser wallet), a curl line and an example
 * answer. One inline script, no external asset.
 */
export function renderReferencePage(doc: OpenApiDocument, opts: { notice?: string } = {}): string {
  const server = doc.servers[0]?.url ?? "";
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );
  const nav = operations
    .map(
      ({ path, method, op }) =>
        `<li><a href="#${escapeText(op.operationId)}">${method.toUpperCase()} ${escapeText(path)}</a> (${escapeText(priceLabel(op))})</li>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(doc.info.title)}: API reference</title>
${FAVICON_LINKS}
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem;line-height:1.5;color:#1a1a1a;background:#fff}
a{color:#0645ad}code,pre{font-family:ui-monospace,monospace}pre{background:#f4f4f4;padding:.75rem;overflow-x:auto}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #999;padding:.25rem .5rem;text-align:left}
caption{text-align:left;font-weight:bold}.method{background:#1a1a1a;color:#fff;padding:0 .4rem}.price{font-weight:normal;font-size:.9em}
section{border-top:1px solid #ccc;margin-top:2rem}.skip{position:absolute;left:-999px}.skip:focus{left:1rem}
form.try label{display:block;margin:.25rem 0}form.try input{min-width:20rem}form.try textarea{width:100%;font-family:ui-monospace,monospace}
form.try output pre{white-space:pre-wrap;word-break:break-all}
.notice{background:#fff8c5;border-bottom:3px solid #d4a72c;padding:.75rem 1rem;text-align:center;font-weight:600}
</style>
</head>
<body>
${opts.notice ? `<div class="notice" role="note">${escapeText(opts.notice)}</div>\n` : ""}<a class="skip" href="#operations">Skip to the operations</a>
<header><h1>${escapeText(doc.info.title)}</h1><p>${escapeText(doc.info.description)}</p>
<p>Machine-readable (for agents): <a href="openapi.json">OpenAPI 3.1</a>, <a href="llms.txt">llms.txt</a>, MCP over Streamable HTTP at <code>${escapeText(`${server}/mcp`)}</code>, <a href=".well-known/x402">/.well-known/x402</a>.</p></header>
<nav aria-label="Operations"><ul>${nav}</ul></nav>
<main id="operations">
${operations.map(({ path, method, op }) => section(server, path, method, op)).join("\n")}
</main>
${TRY_IT_SCRIPT}
</body>
</html>
`;
}
