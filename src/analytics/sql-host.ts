/**
 * SQL: the host of a listing's URL, lower case ("api.example.com"; "[::1]" for IPv6). It is kept in a
 * column of `listings` (migration 5) because it names a merchant that has no name: extracting it from
 * 140,000 URLs at every report build took about 0.15 s of a 2.2 s build. Every writer of `listings`
 * fills it with this expression. A file of its own because the migration that added the column uses it
 * and listings.ts, a writer, bumps the data version through migrations.ts.
 */
export function sqlHost(url: string): string {
  return `lower(regexp_extract(${url}, '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^\\]/?#]*\\]|[^:/?#]*)', 1))`;
}
