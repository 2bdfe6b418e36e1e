/**
 * Issue 69's worst cases, shared by the tests and the benches that pay them: its page of styled blocks
 * (an alt-check of 3 MB of it once took more than 753 CPU-s on the request loop), and a `/healthz` poller
 * that says how long the host kept a health check waiting meanwhile.
 */
import { MAX_HTML_BYTES } from "../../src/merchants/utility/pages/page.ts";

/** The block, repeated until the page is just under `limit` bytes (default: just under the fetch's cap). */
export function widePage(limit = MAX_HTML_BYTES - 1024): string {
  const head = '<!doctype html><html lang="en"><head><title>Wide</title></head><body>';
  const tail = "</body></html>";
  const blocks: string[] = [];
  let size = head.length + tail.length;
  for (let n = 0; ; n++) {
    const block = `<p style="color:#777;background:#888">Sentence number ${n} talks about cats and dogs and birds ${n % 97}. Another sentence ${n} mentions birds.</p><img src="/i${n}.png"><a href="#x${n}"></a><input>`;
    if (size + block.length > limit) break;
    blocks.push(block);
    size += block.length;
  }
  return head + blocks.join("") + tail;
}

/** Polls `url`'s `/healthz` every 250 ms until stopped: the longest any answer took, and how many were not 200. */
export function pollHealth(url: string) {
  let worst = 0;
  let failures = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) }).catch(
        () => null,
      );
      if (response?.status !== 200) failures += 1;
      await response?.arrayBuffer();
      worst = Math.max(worst, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { worst, failures };
    },
  };
}
