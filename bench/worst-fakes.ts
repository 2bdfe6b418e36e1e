/**
 * What `bench/worst-case.ts` serves on 127.0.0.1: the pages and images its URL-taking endpoints fetch, built
 * to the endpoints' documented limits, and the tests' fake upstreams (a language model, a search engine, an
 * images API), with the settings that point the serve process at them.
 */
import http from "node:http";
import sharp from "sharp";
import { MAX_ELEMENTS } from "../src/merchants/utility/pages/a11y-check.ts";
import { MAX_HTML_BYTES } from "../src/merchants/utility/pages/page.ts";
import { startAnthropicUpstream } from "../test/helpers/upstreams/anthropic.ts";
import { startSearxng } from "../test/helpers/upstreams/search.ts";
import { widePage } from "../test/helpers/worst-pages.ts";

/** The URLs of the generated pages and images. */
export interface WorstPages {
  /** Issue 69's page: ~66,000 blocks of styled text, images, links and inputs, just under the page cap. */
  wide: string;
  /** Just under the cap of short sentences: the most sentences a summary ranks. */
  sentences: string;
  /** Nested `<div>`s, as many as fit under the cap. */
  nested: string;
  /** Just under `a11y/check`'s element cap, each element failing a rule or two. */
  a11y: string;
  /** A short article: what warms a page endpoint's worker before its worst case is measured. */
  small: string;
  /** 1,024 x 1,024 of noise in 64 colours: the most paths a trace makes at its largest side. */
  noise: string;
  /** A flat image of nearly the pixel cap: what decoding costs. */
  huge: string;
}

/** Repeats `block(i)` while the page stays under `bytes`. */
function filled(bytes: number, block: (i: number) => string, head = "", tail = ""): string {
  const parts = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Worst</title></head><body>${head}`,
  ];
  let size = parts[0]?.length ?? 0;
  const end = `${tail}</body></html>`;
  for (let i = 0; ; i++) {
    const next = block(i);
    if (size + next.length + end.length >= bytes) break;
    parts.push(next);
    size += next.length;
  }
  parts.push(end);
  return parts.join("");
}

function pages(): Record<string, { type: string; body: Buffer }> {
  const html = (text: string) => ({ type: "text/html; charset=utf-8", body: Buffer.from(text) });
  const wide = widePage();
  const sentences = filled(MAX_HTML_BYTES - 1024, (n) => `<p>Cats sleep ${n}. Dogs run ${n % 13}.</p>`);
  const depth = Math.floor((MAX_HTML_BYTES - 1024) / "<div></div>".length);
  const nested = html(
    `<!doctype html><html><head><title>Nested</title></head><body>${"<div>".repeat(depth)}x${"</div>".repeat(depth)}</body></html>`,
  );
  // Four elements a block, and html, head, title, meta, body besides.
  const blocks = Math.floor((MAX_ELEMENTS - 10) / 4);
  const a11y = Array.from(
    { length: blocks },
    (_, n) =>
      `<p style="color:#aaa;background:#bbb">Low contrast ${n}</p><img src="/i${n}.png"><a href="#x${n}"></a><input>`,
  ).join("");
  const paragraph = "Cats sleep most of the day, and dogs run in the park while birds sing in the trees.";
  return {
    "/small": html(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Small</title></head><body><article><h1>Pets</h1>${`<p>${paragraph}</p>`.repeat(12)}</article></body></html>`,
    ),
    "/wide": html(wide),
    "/sentences": html(sentences),
    "/nested": nested,
    "/a11y": html(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A11y</title></head><body>${a11y}</body></html>`,
    ),
  };
}

async function images(): Promise<Record<string, { type: string; body: Buffer }>> {
  const side = 1024;
  const raw = Buffer.alloc(side * side * 3);
  let seed = 69;
  for (let i = 0; i < raw.length; i += 3) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const colour = seed % 64;
    raw[i] = (colour & 3) * 85;
    raw[i + 1] = ((colour >> 2) & 3) * 85;
    raw[i + 2] = ((colour >> 4) & 3) * 85;
  }
  const noise = await sharp(raw, { raw: { width: side, height: side, channels: 3 } })
    .png()
    .toBuffer();
  // 39.9 million pixels, under the 40 million cap; flat, so it is small to send and large to decode.
  const huge = await sharp({
    create: { width: 6316, height: 6316, channels: 3, background: { r: 29, g: 78, b: 216 } },
  })
    .png()
    .toBuffer();
  return { "/noise.png": { type: "image/png", body: noise }, "/huge.png": { type: "image/png", body: huge } };
}

/** An OpenAI-compatible images API answering every prompt with one PNG of the asked size. */
async function imagesApi(): Promise<{ url: string; close(): Promise<void> }> {
  const png = await sharp({
    create: { width: 1792, height: 1024, channels: 3, background: { r: 200, g: 120, b: 40 } },
  })
    .png()
    .toBuffer();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ created: 0, data: [{ b64_json: png.toString("base64") }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const LLM_KEY = "sk-bench-worst";

export async function startFakes(): Promise<{
  pages: WorstPages;
  env: Record<string, string>;
  close(): Promise<void>;
}> {
  const served = { ...pages(), ...(await images()) };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const found = served[path] ?? (path.endsWith(".png") ? served["/noise.png"] : undefined);
    if (!found) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": found.type, "content-length": found.body.length });
    res.end(req.method === "HEAD" ? undefined : found.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const llm = await startAnthropicUpstream(LLM_KEY);
  // The text sent back as its own translation: the layout is kept, so translate-text's checks pass.
  llm.behaviour = {
    kind: "reply",
    text: (body: { messages: { content: unknown }[] }) =>
      JSON.stringify({ source_language: "en", translation: String(body.messages.at(-1)?.content ?? "") }),
  };
  const search = await startSearxng();
  const imagery = await imagesApi();
  return {
    pages: {
      small: `${base}/small`,
      wide: `${base}/wide`,
      sentences: `${base}/sentences`,
      nested: `${base}/nested`,
      a11y: `${base}/a11y`,
      noise: `${base}/noise.png`,
      huge: `${base}/huge.png`,
    },
    env: {
      X402M_LLM_URL: llm.base,
      X402M_LLM_DIALECT: "anthropic",
      X402M_LLM_KEY: LLM_KEY,
      X402M_LLM_MODEL: "claude-test-1",
      X402M_SEARCH_BACKEND: "searxng",
      X402M_SEARCH_URL: search.base,
      X402M_IMAGE_URL: imagery.url,
      X402M_IMAGE_KEY: "sk-bench-images",
    },
    async close() {
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        llm.close(),
        search.close(),
        imagery.close(),
      ]);
    },
  };
}
