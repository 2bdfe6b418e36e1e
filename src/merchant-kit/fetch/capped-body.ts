import { ReadableStream } from "node:stream/web";
import { FetchError } from "./fetch-errors.ts";

/**
 * Wraps a response body so that reading past `maxBytes` fails with `too_large` and cancels the
 * upstream (we stop downloading, not just stop keeping). A `Content-Length` already over the limit
 * fails on the first read, so callers that only look at status and headers are not refused.
 * Counted bytes are decoded bytes: a small gzip bomb is stopped like a big page.
 * `translate` turns upstream errors (abort by our timer) into our error codes; `done` runs once,
 * however the stream ends.
 */
export function capBody(
  body: ReadableStream<Uint8Array>,
  options: {
    maxBytes: number;
    declaredLength: number | null;
    translate: (error: unknown) => unknown;
    done: () => void;
  },
): ReadableStream<Uint8Array> {
  const { maxBytes, declaredLength, translate, done } = options;
  const reader = body.getReader();
  let received = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  const tooLarge = () => new FetchError("too_large", `the response is larger than ${maxBytes} bytes`);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (declaredLength !== null && declaredLength > maxBytes) {
        await reader.cancel().catch(() => {});
        finish();
        controller.error(tooLarge());
        return;
      }
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        finish();
        controller.error(translate(error));
        return;
      }
      if (chunk.done) {
        finish();
        controller.close();
        return;
      }
      received += chunk.value.byteLength;
      if (received > maxBytes) {
        await reader.cancel().catch(() => {});
        finish();
        controller.error(tooLarge());
        return;
      }
      controller.enqueue(chunk.value);
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
      finish();
    },
  });
}
