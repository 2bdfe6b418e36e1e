/** A handler context for calling provider endpoints directly, without the payment layer. */
import type { HandlerContext } from "../../../../src/merchant-kit/endpoint.ts";

export function handlerContext(url = "http://127.0.0.1/api"): HandlerContext {
  return {
    payer: "0x0000000000000000000000000000000000000001",
    signal: new AbortController().signal,
    services: {} as HandlerContext["services"],
    request: new Request(url, { method: "POST" }),
  };
}
