/**
 * The record of the report service running on a data directory, `<dataDir>/report-service.json`. DuckDB
 * lets one process open the analytics database, so while a server holds it the readers (`report`,
 * `leaderboard`, `simulate --check`) ask that server over HTTP instead: this record is how they find it.
 */
import fs from "node:fs";
import { processAlive } from "../common/process.ts";
import { dataLayout } from "./layout.ts";

export interface ServiceRecord {
  pid: number;
  /** Where a reader on this machine reaches the service. */
  url: string;
  /** The base of the page and badge URLs in what it answers (its --public-url, or its own address). */
  public_url: string;
  started_at: string;
}

/**
 * Writes the record: to a temporary file first, then renamed over the old one, so a reader never sees half
 * a record (rename replaces a file in one step).
 */
export function writeServiceRecord(dataDir: string, record: ServiceRecord): void {
  const file = dataLayout(dataDir).reportService;
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(record)}\n`);
  fs.renameSync(tmp, file);
}

/** Removes the record if it is still `pid`'s: a later service's record is not this one's to remove. */
export function removeServiceRecord(dataDir: string, pid: number): void {
  const file = dataLayout(dataDir).reportService;
  if (readRecord(file)?.pid === pid) fs.rmSync(file, { force: true });
}

/**
 * The running report service of a data directory, or undefined: none recorded, or recorded by a process
 * that is gone (killed before it could remove its record).
 */
export function readServiceRecord(dataDir: string): ServiceRecord | undefined {
  const record = readRecord(dataLayout(dataDir).reportService);
  return record && processAlive(record.pid) ? record : undefined;
}

function readRecord(file: string): ServiceRecord | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<ServiceRecord>;
    if (!Number.isSafeInteger(record.pid) || typeof record.url !== "string") return undefined;
    return {
      pid: record.pid as number,
      url: record.url,
      public_url: typeof record.public_url === "string" ? record.public_url : record.url,
      started_at: String(record.started_at ?? ""),
    };
  } catch {
    // No record, or not one this program wrote: nothing to ask.
    return undefined;
  }
}

/** A listening address readers can connect to: an unspecified host (all interfaces) as loopback. */
export function reachableUrl(url: string): string {
  return url
    .replace(/^http:\/\/0\.0\.0\.0(?=:)/, "http://127.0.0.1")
    .replace(/^http:\/\/\[::\](?=:)/, "http://[::1]");
}
