/**
 * A Solana RPC client (`@solana/kit`'s API, as the SDK's signers take it) over a transport that lets `fetch` count
 * the body itself. kit's HTTP transport sets `content-length` by hand; in a process where npm's `undici` (loaded
 * for the EVM RPC and the safe fetching) became the global dispatcher before any `fetch`, Node's `fetch` sends that
 * header twice and undici 7 refuses the request ("invalid content-length header"). The facilitator started as
 * `facilitator` then answered every Solana verification `transaction_simulation_failed: fetch failed`, while the
 * tests, whose first `fetch` came before undici loaded, passed. Integers travel as kit's own transport reads and
 * writes them: as bigints, whatever their size.
 */
import { createSolanaRpcFromTransport, type RpcTransport } from "@solana/kit";
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from "@solana/rpc-spec-types";

export function solanaRpc(url: string) {
  const transport = (async ({ payload, signal }: { payload: unknown; signal?: AbortSignal }) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json; charset=utf-8" },
      body: stringifyJsonWithBigInts(payload),
      signal,
    });
    if (!response.ok) throw new Error(`the Solana RPC at ${url} answered HTTP ${response.status}`);
    return parseJsonWithBigInts(await response.text());
  }) as RpcTransport;
  return createSolanaRpcFromTransport(transport);
}

export type SolanaRpc = ReturnType<typeof solanaRpc>;
