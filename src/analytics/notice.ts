import type { Analytics } from "./duckdb.ts";

/** The banner a database asks every page to show (`meta.notice`, which the demo sets), if any. */
export async function analyticsNotice(analytics: Analytics): Promise<string | undefined> {
  return (await analytics.one<{ value: string }>("SELECT value FROM meta WHERE key = 'notice'"))?.value;
}
