/**
 * The start of a script, run in its own process, that records every file the process loads: ES modules
 * through a resolve hook (`resolved`, a set of URLs), CommonJS ones in the require cache (`cache`). Tests
 * that prove what a command or a merchant does not load until it must build on it.
 */
export const MODULE_RECORDER = `
import { createRequire, register } from "node:module";
import { MessageChannel } from "node:worker_threads";
const { port1, port2 } = new MessageChannel();
const resolved = new Set();
port1.on("message", (url) => resolved.add(url));
port1.unref();
register(
  "data:text/javascript," +
    encodeURIComponent(
      "let port; export function initialize(data) { port = data.port; }" +
        "export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }",
    ),
  { data: { port: port2 }, transferList: [port2] },
);
const cache = createRequire(import.meta.url).cache;
`;
