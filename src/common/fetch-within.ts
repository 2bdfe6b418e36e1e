import { abortable } from "./abortable.ts";

/**
 * `fetch`, bounded by `init.signal` to the end: the request, and every read of the body after it.
 *
 * Node 20's own fetch stops following the caller's signal once the Request it builds inside has been
 * garbage-collected (nodejs/node#55428; undici keeps that Request alive only from 7.x, nodejs/undici#4627).
 * A body still being read then never ends when the signal aborts. Seen here: in a CI run, a streamed
 * upstream that stalled after two pieces was read for 30 s past its 3 s limit, because a collection came
 * between the answer's headers and the limit. Here the reads themselves wait on the signal, so it holds
 * whatever `fetchImpl` does with it.
 *
 * The answer keeps its status and headers; its body errors with the signal's reason once it aborts.
 */
export async function fetchWithin(
  input: string | URL,
  init: RequestInit & { signal: AbortSignal },
  fetchImpl: typeof fetch = fetch,
): Promise<Response> {
  const { signal } = init;
  const pending = fetchImpl(input, init);
  // An answer that arrives after the signal has given up on it is not read: its connection is freed.
  pending.then(
    (late) => {
      if (signal.aborted) late.body?.cancel().catch(() => {});
    },
    () => {},
  );
  const response = await abortable(pending, signal);
  if (!response.body) return response;
  return new Response(untilAborted(response.body, signal), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** `body` as a stream that errors with the signal's reason when it aborts, and cancels `body` then. */
function untilAborted(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let onAbort = () => {};
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onAbort = () => {
          controller.error(signal.reason);
          reader.cancel(signal.reason).catch(() => {});
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      },
      // This closure holds `signal`: a composite from `AbortSignal.any` lives as long as its reader does.
      async pull(controller) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (error) {
          signal.removeEventListener("abort", onAbort);
          controller.error(error);
          return;
        }
        if (signal.aborted) return; // already errored with the reason
        if (next.done) {
          signal.removeEventListener("abort", onAbort);
          controller.close();
        } else controller.enqueue(next.value);
      },
      cancel(reason) {
        signal.removeEventListener("abort", onAbort);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
