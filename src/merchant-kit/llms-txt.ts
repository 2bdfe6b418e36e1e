/**
 * A host's `/llms.txt` (the llmstxt.org convention: a title, a one-line summary, then Markdown sections of
 * links): what an agent should know to use the host, where its OpenAPI document and MCP endpoint are, and
 * every advertised operation's price, all from the catalogue, which is the one place a price is written.
 * The OpenAPI document points here (`x-agentcash-guidance.llmsTxtUrl`).
 */
import {
  type AnyEndpoint,
  exactTransfersOf,
  isMetered,
  isMeteredOnly,
  type Merchant,
  offersChannels,
  offersExactPermit2,
  resourceUrl,
  templatePath,
} from "./endpoint.ts";
import type { HostInfo } from "./host-info.ts";
import { summaryOf } from "./summary.ts";

/** "$0.001 per call", "up to $0.04 per call, metered..." or "$0.018 per call, or metered up to it...". */
export function priceText(endpoint: AnyEndpoint): string {
  const channel = offersChannels(endpoint)
    ? "; or through a payment channel (x402 scheme batch-settlement)"
    : "";
  const metered = "you pay what the call used (x402 scheme upto)";
  const exact = `x402 scheme exact${exactTransfersText(endpoint)}`;
  if (isMeteredOnly(endpoint)) return `up to $${endpoint.price} per call, metered: ${metered}${channel}`;
  if (isMetered(endpoint))
    return `$${endpoint.price} per call (${exact}), or metered up to it: ${metered}${channel}`;
  return `$${endpoint.price} per call (${exact})${channel}`;
}

/** How exact is signed, when it may be through Permit2: nothing for the default, EIP-3009 alone. */
function exactTransfersText(endpoint: AnyEndpoint): string {
  if (!offersExactPermit2(endpoint)) return "";
  return exactTransfersOf(endpoint).includes("eip3009")
    ? ", as an EIP-3009 authorization or through Permit2"
    : ", through Permit2";
}

/** The Markdown list of the merchant's advertised prices, and a line for those it serves unadvertised. */
function priceList(merchant: Merchant): string[] {
  const listed = merchant.endpoints.filter((e) => e.listed !== false);
  const unlisted = merchant.endpoints.length - listed.length;
  const lines = listed.map(
    (e) =>
      `- [${e.method} ${templatePath(e.path)}](${resourceUrl(merchant, e)}): ${priceText(e)}. ${summaryOf(e.description)}`,
  );
  if (listed.length === 0) lines.push("- None advertised.");
  if (unlisted > 0)
    lines.push(
      `- ${unlisted} more ${unlisted === 1 ? "operation is" : "operations are"} served but not advertised: their prices are in the OpenAPI document.`,
    );
  return lines;
}

/** The links to a host's documents. */
function documentLinks(url: string): string[] {
  return [
    `- [OpenAPI document](${url}/openapi.json): every operation, its input and output schemas, its price (x-payment-info)`,
    `- [MCP endpoint](${url}/mcp): the same operations as MCP tools, over Streamable HTTP; the paid ones paid through x402's MCP transport`,
    `- [API reference](${url}/docs): a page to read and try each call`,
    `- [x402 discovery](${url}/.well-known/x402): the advertised paid resources, for x402 crawlers`,
  ];
}

/** The merchant's section of prices and free routes. */
function operations(merchant: Merchant): string[] {
  const free = merchant.free ?? [];
  return [
    "## Prices",
    "",
    ...priceList(merchant),
    ...(free.length > 0
      ? [
          "",
          "## Free",
          "",
          ...free.map(
            (r) =>
              `- [${r.method} ${r.path}](${merchant.publicUrl}${r.path}): free. ${summaryOf(r.description)}`,
          ),
        ]
      : []),
  ];
}

/** The one-line summary under the title. */
function summaryLine(merchant: Merchant): string {
  // The catalogue's own strings: a number would print a tiny price as 1e-7.
  const prices = merchant.endpoints.map((e) => e.price).sort((a, b) => Number(a) - Number(b));
  const [low, high] = [prices[0], prices[prices.length - 1]];
  const count = `${prices.length} paid ${prices.length === 1 ? "operation" : "operations"}`;
  const range =
    low === undefined
      ? "no paid operations"
      : low === high
        ? `${count}, $${low} a call`
        : `${count}, $${low} to $${high} a call`;
  return `> Paid per call through x402, no account and no key: ${range}.`;
}

/** A merchant host's `/llms.txt`. */
export function llmsTxt(merchant: Merchant, info: HostInfo): string {
  return [
    `# ${merchant.title}`,
    "",
    summaryLine(merchant),
    "",
    ...(info.own ? [info.own, ""] : []),
    info.paying,
    "",
    "## Documents",
    "",
    ...documentLinks(merchant.publicUrl),
    "",
    ...operations(merchant),
    "",
  ].join("\n");
}

/**
 * The `/llms.txt` of a host that serves several merchants, each under its own path (the demo's shops):
 * the host's documents, then per merchant its documents and prices.
 */
export function llmsTxtOfHosts(
  host: { title: string; summary: string; url: string; guidance: string },
  merchants: readonly { merchant: Merchant; info: HostInfo }[],
): string {
  return [
    `# ${host.title}`,
    "",
    `> ${host.summary}`,
    "",
    host.guidance,
    "",
    "## Documents",
    "",
    `- [OpenAPI document](${host.url}/openapi.json): every operation of every merchant here, its schemas and its price`,
    "",
    ...merchants.flatMap(({ merchant, info }) => [
      `## ${merchant.title}`,
      "",
      ...(info.own ? [info.own, ""] : []),
      ...documentLinks(merchant.publicUrl),
      `- [llms.txt](${merchant.publicUrl}/llms.txt): this section, on its own`,
      "",
      ...operations(merchant).map((line) => line.replace(/^## /, "### ")),
      "",
    ]),
  ].join("\n");
}
