/**
 * One OpenAPI document for a host that serves several merchants, each under its own path prefix (the
 * demo's shops: `/fortune/...`, `/dice/...`). Agents' discovery reads a host's `/openapi.json` at its
 * origin only, so each merchant's own document (at `/<prefix>/openapi.json`) would go unseen; this one holds
 * every operation of them all, its path prefixed, each keeping its own price and wallet (`x-payment-info`).
 */
import type { HostInfo } from "./host-info.ts";
import type { OpenApiDocument, OpenApiOperation } from "./openapi.ts";

export interface CombinedHost {
  title: string;
  description: string;
  /** The host's public base URL, no trailing slash. */
  url: string;
  info: HostInfo;
}

/** "fortune" + "getFortune" -> "fortuneGetFortune": operation ids stay unique across merchants. */
function prefixedId(prefix: string, id: string): string {
  const head = prefix.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase());
  return `${head}${id.charAt(0).toUpperCase()}${id.slice(1)}`;
}

/**
 * The host's document: each part's operations under `/<prefix>`, their ids prefixed, the parts' shared
 * schemas once (the kit writes the same ones for every merchant).
 */
export function combinedOpenApi(
  host: CombinedHost,
  parts: readonly { prefix: string; doc: OpenApiDocument }[],
): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  const schemas: OpenApiDocument["components"]["schemas"] = {};
  for (const { prefix, doc } of parts) {
    for (const [path, operations] of Object.entries(doc.paths)) {
      paths[`/${prefix}${path}`] = Object.fromEntries(
        Object.entries(operations).map(([method, op]): [string, OpenApiOperation] => [
          method,
          { ...op, operationId: prefixedId(prefix, op.operationId) },
        ]),
      );
    }
    Object.assign(schemas, doc.components.schemas);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: host.title,
      version: "1.0.0",
      description: host.description,
      contact: host.info.contact,
      "x-guidance": host.info.guidance,
    },
    "x-agentcash-guidance": { llmsTxtUrl: `${host.url}/llms.txt` },
    servers: [{ url: host.url }],
    paths,
    components: { schemas },
  };
}
