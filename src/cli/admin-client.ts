/**
 * Asks a running process that holds a PGlite directory to act for a command, through the loopback admin paths
 * and token it wrote to its record (services/facilitator-admin.ts): `facilitator keys`, `channels`.
 */
import type { AdminRecord } from "../services/index.ts";

/** A call to `running`'s admin path; a process that does not answer is said so, in one line. */
export function adminCaller(running: AdminRecord, what: string) {
  return async (method: string, path: string, body?: unknown): Promise<Response> => {
    try {
      return await fetch(`${running.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${running.token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        // A claim or refund waits for its transaction: longer than a key's write.
        signal: AbortSignal.timeout(120_000),
      });
    } catch (error) {
      throw new Error(
        `the ${what} running as process ${running.pid} holds the database and does not answer at ${running.url} (${(error as Error).message})`,
      );
    }
  };
}

/** An answer's JSON, or its refusal's message as an error. */
export async function adminJson(answer: Response, what: string): Promise<unknown> {
  if (answer.ok) return answer.json();
  const refusal = (await answer.json().catch(() => undefined)) as
    | { error?: { message?: string } }
    | undefined;
  throw new Error(`the running ${what} refused: ${refusal?.error?.message ?? `HTTP ${answer.status}`}`);
}
