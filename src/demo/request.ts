import { pathParams } from "../merchant-kit/index.ts";
import type { PlanEndpoint } from "./plan-types.ts";

/**
 * The fetch arguments of one call: its path's parameters (`/pay/:agent_id`) from the input, the rest of
 * the input as query (GET) or JSON body (POST).
 */
export function request(
  base: string,
  endpoint: PlanEndpoint,
  fullInput: Record<string, unknown>,
): [string, RequestInit] {
  const input = { ...fullInput };
  let path = endpoint.path;
  for (const name of pathParams(endpoint.path)) {
    path = path.replace(`:${name}`, encodeURIComponent(String(input[name])));
    delete input[name];
  }
  if (endpoint.method === "POST") {
    return [
      `${base}${path}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(input),
      },
    ];
  }
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(input)) {
    for (const v of Array.isArray(value) ? value : [value]) query.append(key, String(v));
  }
  const qs = query.toString();
  return [`${base}${path}${qs ? `?${qs}` : ""}`, { method: "GET" }];
}
