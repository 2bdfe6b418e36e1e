/**
 * The merchant hosts' MCP faces as the simulated agents use them: which payments go through one, and one
 * connected client a merchant.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { MCP_PATH } from "../common/mcp/http.ts";
import { connectMcp, toolNameOf } from "../merchant-kit/index.ts";
import type { Action, PlanEndpoint } from "./plan-types.ts";
import type { SimMerchant } from "./sim-merchants.ts";

/** A merchant host's MCP face: a connected client, and the tool each endpoint is (if the host lists it). */
export interface McpFace {
  client: Client;
  toolFor(endpoint: PlanEndpoint): string | undefined;
}

/**
 * Whether this payment goes through the merchant's MCP face: an agent's, for every other agent wallet
 * (fixed by its id, so a wallet keeps its face across the week): agents reach paid services through MCP
 * more and more, and the week then holds payments from both faces for the screens and the check.
 */
export function viaMcp(action: Extract<Action, { type: "pay" }>): boolean {
  if (action.behaviour !== "agent") return false;
  let hash = 0;
  for (const char of action.from) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % 2 === 0;
}

/** One MCP client a merchant, connected on first use, and the tools its host lists. */
export class McpFaces {
  private readonly faces = new Map<string, Promise<McpFace>>();

  get(merchant: SimMerchant): Promise<McpFace> {
    let face = this.faces.get(merchant.id);
    if (!face) {
      face = connectFace(merchant);
      face.catch(() => this.faces.delete(merchant.id));
      this.faces.set(merchant.id, face);
    }
    return face;
  }

  /** Closes every client; never throws. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.faces.values()].map((face) => face.then((f) => f.client.close()).catch(() => undefined)),
    );
  }
}

async function connectFace(merchant: SimMerchant): Promise<McpFace> {
  const client = await connectMcp(`${merchant.url}${MCP_PATH}`, { name: "x402-merchants-demo-agent" });
  const names = new Set((await client.listTools()).tools.map((t) => t.name));
  return {
    client,
    // A path two routes share is named with the method first (merchant-kit/mcp/tools.ts); an unlisted
    // endpoint is no tool and is paid over HTTP.
    toolFor: (endpoint) =>
      [toolNameOf(endpoint.path), `${endpoint.method.toLowerCase()}_${toolNameOf(endpoint.path)}`].find((n) =>
        names.has(n),
      ),
  };
}
