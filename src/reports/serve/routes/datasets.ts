/**
 * The weekly datasets: every report of a window as NDJSON or CSV, the evidence behind every flag and the
 * flag feed's rows as NDJSON, downloads under the report's licence.
 */
import type { Hono } from "hono";
import { onNotFound } from "../../../common/http.ts";
import type { ReportWindow } from "../../model.ts";
import { CSV_HEADER, reportsToCsvRows, reportsToNdjson } from "../../render/dataset.ts";
import type { Report } from "../../schema.ts";
import { LICENSE_URL } from "../../week/report.ts";
import { endBlockParam } from "../params.ts";
import type { ReportService } from "../service.ts";

const ndjsonLine = (document: unknown) => `${JSON.stringify(document)}\n`;

/**
 * A body rendered batch by batch as its reader takes it: a batch is read only when the one before is sent,
 * and a reader that leaves stops the reading. A batch that fails ends the body short, which the reader sees
 * as a broken transfer, never as a complete file.
 */
function streamed<T>(
  batches: AsyncIterable<T[]>,
  render: (batch: T[]) => string,
  head = "",
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = batches[Symbol.asyncIterator]();
  let pending = head;
  return new ReadableStream({
    async pull(controller) {
      if (pending !== "") {
        controller.enqueue(encoder.encode(pending));
        pending = "";
        return;
      }
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(render(next.value)));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

export function datasetRoutes(app: Hono, reports: ReportService): void {
  // The datasets are written as they are read, a batch of reports at a time: a window of 500,000 merchants
  // is a gigabyte of JSON, which no process should hold whole (nor its reader's page views wait behind).
  const chain = reports.chain.slug;
  app.get(`/v1/datasets/${chain}/:file`, async (c) => {
    const endBlock = endBlockParam(c.req.query("end_block"));
    const file = c.req.param("file");
    const download = (window: ReportWindow, kind: string, format: string) => {
      c.header(
        "Content-Type",
        format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      );
      c.header(
        "Content-Disposition",
        `attachment; filename="x402-merchant-${kind}-${chain}-${window.end_block}.${format}"`,
      );
      c.header("Link", `<${LICENSE_URL}>; rel="license"`);
    };
    if (file === "flags.ndjson") {
      const { window, batches } = await reports.readFlags(endBlock);
      download(window, "flags", "ndjson");
      return c.body(streamed(batches, (rows) => rows.map(ndjsonLine).join("")));
    }
    if (file === "evidence.ndjson") {
      const { window, batches } = await reports.readEvidence(endBlock);
      download(window, "evidence", "ndjson");
      return c.body(streamed(batches, (documents) => documents.map(ndjsonLine).join("")));
    }
    const match = /^reports\.(ndjson|csv)$/.exec(file);
    if (!match) return onNotFound(c);
    const format = match[1] as "ndjson" | "csv";
    const { window, batches } = await reports.readReports(endBlock);
    download(window, "reports", format);
    const parse = (bodies: string[]) => bodies.map((body) => JSON.parse(body) as Report);
    return c.body(
      format === "csv"
        ? streamed(batches, (bodies) => reportsToCsvRows(parse(bodies)), CSV_HEADER)
        : streamed(batches, (bodies) => reportsToNdjson(parse(bodies))),
    );
  });
}
