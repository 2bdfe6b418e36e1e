import type { AnyEndpoint, HandlerContext } from "../../../src/merchant-kit/endpoint.ts";

export const ctx = {
  payer: `0x${"1".repeat(40)}`,
  signal: new AbortController().signal,
  services: {} as never,
  request: new Request("http://127.0.0.1/"),
} as HandlerContext;

/** Parses the input as the server would, then runs the handler. */
export async function call(endpoint: AnyEndpoint, input: unknown): Promise<unknown> {
  return endpoint.handler(endpoint.input.parse(input), ctx);
}
