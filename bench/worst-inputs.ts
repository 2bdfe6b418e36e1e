/**
 * Each paid endpoint's most expensive input within its documented limits, for `bench/worst-case.ts`. The
 * numbers come from the constants the endpoints' schemas are built from, so a limit raised in a catalogue
 * is a worse case here too. An endpoint without an entry gets `"none"`, and the run fails until it has one.
 */

import type { AnyEndpoint } from "../src/merchant-kit/endpoint.ts";
import {
  MAX_SPEECH_CHARACTERS,
  MAX_TRANSCRIPTION_SECONDS,
} from "../src/merchants/inference/audio/metering.ts";
import { ROUTES } from "../src/merchants/inference/tiers.ts";
import { MAX_EXPRESSION_LENGTH } from "../src/merchants/utility/calc-limits.ts";
import { MAX_INPUT_BYTES } from "../src/merchants/utility/data/convert-engine.ts";
import { MAX_DATA_LENGTH, MAX_MARGIN, MAX_SIZE } from "../src/merchants/utility/data/qr-engine.ts";
import { MAX_COLUMNS, MAX_ROWS } from "../src/merchants/utility/data/table.ts";
import { MAX_ELEMENTS } from "../src/merchants/utility/pages/a11y-check.ts";
import { MAX_INPUT_CHARACTERS as MAX_MESSAGES_CHARACTERS } from "../src/merchants/utility/providers/messages-input.ts";
import {
  MAX_PAGE_SIZE,
  MAX_ROW_BYTES,
  MAX_ROWS_PER_WRITE,
  MAX_SCRATCHPAD_BYTES,
} from "../src/merchants/utility/state/limits.ts";
import type { WorstPages } from "./worst-fakes.ts";
import type { SocialQueries } from "./worst-social.ts";

export interface Request {
  url: string;
  init?: RequestInit;
}

export interface WorstCall extends Request {
  name: string;
  /** Paid calls that set up the state the measured one needs (not measured). */
  before?: Request[];
}

export type WorstCase = WorstCall | { name: string; skip: string };

type Builder = (base: string, pages: WorstPages, endpoint: AnyEndpoint) => WorstCase[];

const get = (base: string, path: string, query: Record<string, string | number>): Request => ({
  url: `${base}${path}?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`,
});

const post = (base: string, path: string, body: unknown): Request => ({
  url: `${base}${path}`,
  init: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
});

const named = (name: string, request: Request, before?: Request[]): WorstCall => ({
  name,
  ...request,
  before,
});

/**
 * A page endpoint's worker warmed with a short article first: what is measured is the call's own reading.
 * A cold worker's start (about 0.7-1 CPU-s for the readers, 2.5 for the audit) is paid once per idle
 * period, whatever the calls, and is recorded apart in docs/benchmarks-log.md.
 */
const warm = (base: string, path: string, pages: WorstPages): Request[] => [
  get(base, path, { url: pages.small }),
];

/** `count` rows, each just under the per-row cap. */
function storeRows(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    n: i,
    text: "x".repeat(MAX_ROW_BYTES - 64).slice(0, MAX_ROW_BYTES - 64 - String(i).length),
  }));
}

const insertAll = (base: string, collection: string) =>
  post(base, "/api/store/insert", { collection, rows: storeRows(MAX_ROWS_PER_WRITE) });

/** A pg_dump-style SQL file of as many rows as the row cap and the byte cap allow. */
function sqlDump(): string {
  const lines = ["CREATE TABLE t (id integer, name text, score numeric);"];
  let size = lines[0]?.length ?? 0;
  for (let i = 0; i < MAX_ROWS - 1; i++) {
    const line = `INSERT INTO t VALUES (${i},'n${i}',${i}.5);`;
    if (size + line.length + 1 > MAX_INPUT_BYTES) break;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

/** CSV of the column cap, as many records as fit in the byte cap. */
function wideCsv(): string {
  const header = Array.from({ length: MAX_COLUMNS }, (_, i) => `c${i}`).join(",");
  const record = Array.from({ length: MAX_COLUMNS }, (_, i) => String(i % 10)).join(",");
  const records = Math.min(MAX_ROWS, Math.floor((MAX_INPUT_BYTES - header.length) / (record.length + 2)) - 1);
  return [header, ...Array.from({ length: records }, () => record)].join("\r\n");
}

/**
 * Messages up to a chat route's character caps, and its largest `max_tokens`. A metered (upto) route takes
 * only what its maximum covers, which its description states ("a P-token prompt at max_tokens M"): a prompt
 * of about that many tokens (English runs about 4 characters a token; 3 keeps it within) at M.
 */
function chatBody(endpoint: AnyEndpoint): unknown {
  const alias = /\/_t\/(t\d+)/.exec(endpoint.path)?.[1] ?? "default";
  const route = ROUTES.find((r) => r.alias === alias);
  if (!route) throw new Error(`no route for ${endpoint.path}`);
  const { messageCharacters, maxTokens } = route.limits;
  let { inputCharacters } = route.limits;
  let maxOut = maxTokens.max;
  const covered = /a (\d+)-token prompt at max_tokens (\d+)/.exec(endpoint.description);
  if (endpoint.path.endsWith("/upto")) {
    if (!covered) throw new Error(`${endpoint.path}: its description states no coverage`);
    inputCharacters = Math.min(inputCharacters, Number(covered[1]) * 3);
    maxOut = Number(covered[2]);
  }
  const per = Math.min(inputCharacters, messageCharacters ?? inputCharacters);
  const messages: { role: string; content: string }[] = [];
  for (let left = inputCharacters; left > 0; left -= per) {
    const text = "The tide goes out and the pools fill with small fish. ".repeat(Math.ceil(per / 54));
    messages.push({
      role: messages.length % 2 ? "assistant" : "user",
      content: text.slice(0, Math.min(per, left)),
    });
  }
  if (messages.length % 2 === 0) messages.push({ role: "user", content: "?" });
  return { messages: messages.slice(0, 1000), max_tokens: maxOut };
}

/** A 16 kHz mono 16-bit WAV of the transcription cap's length, of tones and noise. */
function longWav(): Blob {
  const rate = 16_000;
  const samples = rate * (MAX_TRANSCRIPTION_SECONDS - 1);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write("RIFF", 0);
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write("WAVEfmt ", 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write("data", 36);
  wav.writeUInt32LE(samples * 2, 40);
  let seed = 1;
  for (let i = 0; i < samples; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const tone = Math.sin((2 * Math.PI * (200 + ((i / rate) % 3) * 150) * i) / rate) * 8000;
    wav.writeInt16LE(Math.round(tone + ((seed % 2000) - 1000)), 44 + i * 2);
  }
  return new Blob([wav], { type: "audio/wav" });
}

const UTILITY: Record<string, Builder> = {
  "GET /api/seo/alt-check": (b, p) => [
    named("wide page", get(b, "/api/seo/alt-check", { url: p.wide }), warm(b, "/api/seo/alt-check", p)),
  ],
  "GET /api/scrape": (b, p) => [
    named("wide page", get(b, "/api/scrape", { url: p.wide }), warm(b, "/api/scrape", p)),
    named("nested divs", get(b, "/api/scrape", { url: p.nested }), warm(b, "/api/scrape", p)),
  ],
  "GET /api/ping": (b, p) => [named("3 MiB page", get(b, "/api/ping", { url: p.wide, method: "GET" }))],
  "GET /api/store": (b) => [named("after a full write", get(b, "/api/store", {}))],
  "POST /api/store/insert": (b) => [named("1,000 rows of 16 KiB", insertAll(b, "bench"))],
  "GET /api/store/query": (b) => [
    named("1,000 rows of 16 KiB", get(b, "/api/store/query", { collection: "bench", limit: MAX_PAGE_SIZE })),
  ],
  "GET /api/store/export": (b) => [
    named("json", get(b, "/api/store/export", { collection: "bench", format: "json" })),
    named("csv", get(b, "/api/store/export", { collection: "bench", format: "csv" })),
  ],
  "POST /api/store/delete": (b) => [
    named("every row", post(b, "/api/store/delete", { collection: "bench", where: {} }), [
      insertAll(b, "bench"),
    ]),
  ],
  "POST /api/store/drop": (b) => [
    named("1,000 rows", post(b, "/api/store/drop", { collection: "bench" }), [insertAll(b, "bench")]),
  ],
  "POST /api/store/expire": (b) => [
    named("1,000 rows", post(b, "/api/store/expire", { collection: "bench-expire", ttl_seconds: 3600 }), [
      insertAll(b, "bench-expire"),
    ]),
  ],
  "GET /api/timezone": (b) => [named("a border", get(b, "/api/timezone", { lat: "46.5", lng: "6.5" }))],
  "GET /api/geo": (b) => [named("an IPv6 address", get(b, "/api/geo", { ip: "2001:4860:4860::8888" }))],
  "GET /api/calc": (b) => [
    named(
      "nested powers",
      get(b, "/api/calc", {
        expr: "factorial(170)^(1/3)+"
          .repeat(45)
          .slice(0, MAX_EXPRESSION_LENGTH - 1)
          .replace(/\+?$/, ""),
      }),
    ),
    named(
      "long sum",
      get(b, "/api/calc", {
        expr: `1${"+sqrt(2)".repeat((MAX_EXPRESSION_LENGTH - 1) / 8)}`.slice(0, MAX_EXPRESSION_LENGTH),
      }),
    ),
  ],
  "GET /api/a11y/contrast": (b) => [
    named("rgba", get(b, "/api/a11y/contrast", { fg: "#77777780", bg: "#ffffff" })),
  ],
  "GET /api/scratchpad": (b) => [named("list", get(b, "/api/scratchpad", {}))],
  "POST /api/scratchpad/write": (b) => [
    named(
      "8 MiB of text",
      post(b, "/api/scratchpad/write", {
        name: "bench",
        content: "x".repeat(MAX_SCRATCHPAD_BYTES),
        content_type: "text/plain",
      }),
    ),
    named(
      "8 MiB of JSON",
      post(b, "/api/scratchpad/write", {
        name: "bench-json",
        content: `[${"1,".repeat(MAX_SCRATCHPAD_BYTES / 2 - 2)}1]`,
        content_type: "application/json",
      }),
    ),
  ],
  "GET /api/scratchpad/read": (b) => [named("8 MiB", get(b, "/api/scratchpad/read", { name: "bench" }))],
  "POST /api/scratchpad/delete": (b) => [
    named("8 MiB", post(b, "/api/scratchpad/delete", { name: "bench" })),
  ],
  "GET /api/seo/metadata": (b, p) => [
    named("wide page", get(b, "/api/seo/metadata", { url: p.wide }), warm(b, "/api/seo/metadata", p)),
  ],
  "GET /api/summarize": (b, p) => [
    named(
      "wide page",
      get(b, "/api/summarize", { url: p.wide, sentences: 10 }),
      warm(b, "/api/summarize", p),
    ),
    named(
      "short sentences",
      get(b, "/api/summarize", { url: p.sentences, sentences: 10 }),
      warm(b, "/api/summarize", p),
    ),
  ],
  "GET /api/dns": () => [{ name: "", skip: "needs DNS servers" }],
  "GET /api/email/verify": () => [{ name: "", skip: "needs DNS servers" }],
  "GET /api/icon/search": (b) => [named("50 results", get(b, "/api/icon/search", { q: "a", limit: 50 }))],
  "POST /api/icon/generate": (b) => [
    named(
      "1024 px PNG",
      post(b, "/api/icon/generate", { name: "house", style: "solid", size: 1024, format: "png" }),
    ),
  ],
  "POST /api/data/convert": (b) => [
    named("SQL dump, 5 MiB", post(b, "/api/data/convert", { data: sqlDump(), from: "sql", to: "json" })),
    named("CSV, 1,000 columns", post(b, "/api/data/convert", { data: wideCsv(), from: "csv", to: "sql" })),
  ],
  "POST /v1/messages": (b) => [
    named(
      "input at the cap",
      post(b, "/v1/messages", {
        model: "claude-haiku-4-5",
        max_tokens: 1024,
        messages: Array.from({ length: 99 }, (_, i) => ({
          role: i % 2 ? "assistant" : "user",
          content: "y".repeat(Math.floor(MAX_MESSAGES_CHARACTERS / 99)),
        })),
      }),
    ),
  ],
  "POST /api/search": (b) => [
    named("10 results", post(b, "/api/search", { query: "q".repeat(400), max_results: 10, topic: "news" })),
  ],
  "GET /api/qr": (b) => [
    named(
      "7,089 digits, 2048 px",
      get(b, "/api/qr", { data: "7".repeat(MAX_DATA_LENGTH), ecc: "L", size: MAX_SIZE, margin: MAX_MARGIN }),
    ),
  ],
  "GET /api/a11y/check": (b, p) => [
    named(
      `just under ${MAX_ELEMENTS.toLocaleString("en")} elements`,
      get(b, "/api/a11y/check", { url: p.a11y, level: "AAA" }),
      warm(b, "/api/a11y/check", p),
    ),
  ],
  "POST /api/translate-text": (b) => [
    named(
      "8,000 characters",
      post(b, "/api/translate-text", {
        text: "Hello **world**.\n\n".repeat(445).slice(0, 8000),
        target: "fr",
      }),
    ),
  ],
  "GET /api/uptime/report": (b, p) => [named("3 MiB page", get(b, "/api/uptime/report", { url: p.wide }))],
  "POST /api/vectorize": (b, p) => [
    named(
      "noise, 64 colours",
      post(b, "/api/vectorize", {
        image_url: p.noise,
        format: "svg",
        colors: 64,
        detail: "high",
        engine: "local",
      }),
    ),
    named(
      "40 MP flat",
      post(b, "/api/vectorize", {
        image_url: p.huge,
        format: "pdf",
        colors: 64,
        detail: "high",
        engine: "local",
      }),
    ),
  ],
  "POST /api/generate-image": (b) => [
    named(
      "4,000-character prompt",
      post(b, "/api/generate-image", { prompt: "w".repeat(4000), aspect_ratio: "16:9" }),
    ),
  ],
};

function inference(base: string, endpoint: AnyEndpoint): WorstCase[] | undefined {
  if (endpoint.path.startsWith("/v1/chat/completions"))
    return [named("input and max_tokens at the caps", post(base, endpoint.path, chatBody(endpoint)))];
  if (endpoint.path === "/v1/audio/speech")
    return [
      named(
        `${MAX_SPEECH_CHARACTERS} characters at speed 0.25`,
        post(base, endpoint.path, {
          model: "tts-1",
          voice: "alloy",
          speed: 0.25,
          response_format: "mp3",
          input: "The tide pools fill at dusk, and the crabs come out to feed. "
            .repeat(50)
            .slice(0, MAX_SPEECH_CHARACTERS),
        }),
      ),
    ];
  if (endpoint.path === "/v1/audio/transcriptions") {
    const form = new FormData();
    form.set("file", longWav(), "long.wav");
    form.set("model", "whisper-1");
    return [
      named(`${MAX_TRANSCRIPTION_SECONDS - 1} s WAV`, {
        url: `${base}${endpoint.path}`,
        init: { method: "POST", body: form },
      }),
    ];
  }
  return undefined;
}

/** The social API on its default provider, the operator's archive, seeded by `worst-social.ts`. */
function social(base: string, endpoint: AnyEndpoint, queries: SocialQueries): WorstCase[] | undefined {
  if (endpoint.path === "/tweets/mediaUpload") return [{ name: "", skip: "needs X's upload service" }];
  const query = queries[endpoint.path];
  if (endpoint.method !== "GET" || !query) return undefined;
  return [named("the archive's fullest subject", get(base, endpoint.path, query))];
}

export function worstCases(
  host: "utility" | "inference" | "social",
  endpoint: AnyEndpoint,
  base: string,
  pages: WorstPages,
  queries: SocialQueries,
): WorstCase[] | "none" {
  const found =
    host === "utility"
      ? UTILITY[`${endpoint.method} ${endpoint.path}`]?.(base, pages, endpoint)
      : host === "inference"
        ? inference(base, endpoint)
        : social(base, endpoint, queries);
  return found ?? "none";
}
