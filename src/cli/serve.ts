import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { reportRoutes } from "../reports/http.ts";
import { ReportService } from "../reports/service.ts";
import type { Store } from "../store/duckdb.ts";
import { importNdjson } from "../store/import.ts";
import { configFrom, type Flags, openStore, UsageError } from "./args.ts";

export const SAMPLE_FILE = fileURLToPath(new URL("../../sample/week.ndjson", import.meta.url));

/**
 * Serves the report service. With `sample`, an empty store is first loaded with the bundled sample
 * week so a newcomer sees real pages at once; the store remembers it holds sample data.
 * Prints one JSON line mapping each service to its base URL when ready; stops on SIGINT/SIGTERM.
 */
export async function runServe(
  args: string[],
  flags: Flags,
  { sample }: { sample: boolean },
): Promise<number> {
  if (args.length > 0) throw new UsageError("serve takes no arguments");
  const config = configFrom(flags);
  const store = await openStore(config);
  if (sample) await loadSampleIfEmpty(store);

  const { server, url } = await listen(config.host, config.port, (publicUrl) =>
    reportRoutes(new ReportService(store, { publicUrl: config.publicUrl ?? publicUrl }), {
      sample: async () =>
        (await store.one("SELECT 1 FROM meta WHERE key = 'sample' AND value = 'true'")) !== undefined,
    }),
  );
  process.stdout.write(`${JSON.stringify({ reports: url })}\n`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      server.close(() => resolve());
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  store.close();
  return 0;
}

async function listen(
  host: string,
  port: number,
  makeApp: (url: string) => { fetch: (req: Request) => Response | Promise<Response> },
) {
  // The app needs its own URL for the page and badge links, which a port of 0 only gives after listening.
  let app: ReturnType<typeof makeApp> | undefined;
  return new Promise<{ server: ReturnType<typeof serve>; url: string }>((resolve, reject) => {
    const server = serve(
      {
        fetch: (req) => (app ? app.fetch(req) : new Response("starting", { status: 503 })),
        hostname: host,
        port,
      },
      (info) => {
        const url = `http://${info.family === "IPv6" ? `[${info.address}]` : info.address}:${info.port}`;
        app = makeApp(url);
        resolve({ server, url });
      },
    );
    server.once("error", reject);
  });
}

async function loadSampleIfEmpty(store: Store): Promise<void> {
  const empty = await store.one<{ n: bigint }>(
    "SELECT (SELECT count(*) FROM payments) + (SELECT count(*) FROM merchants) AS n",
  );
  if (empty?.n !== 0n) return;
  if (!fs.existsSync(SAMPLE_FILE))
    throw new Error(`the bundled sample ${path.relative(process.cwd(), SAMPLE_FILE)} is missing`);
  await importNdjson(store, SAMPLE_FILE);
  await store.run("INSERT OR REPLACE INTO meta VALUES ('sample', 'true')");
  console.error(JSON.stringify({ level: "info", msg: "loaded the bundled sample week", file: SAMPLE_FILE }));
}
