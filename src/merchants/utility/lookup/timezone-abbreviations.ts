/**
 * Abbreviations the IANA tz database itself uses where CLDR (so Node's ICU) has none in English and
 * `Intl` falls back to "GMT+3": MSK, JST, KST, WIB, PKT, HKT... Generated from tzdata 2025b (Debian's
 * /usr/share/zoneinfo, Python's `zoneinfo` `tzname()` on 15 January and 15 July 2026) against the zones
 * where every English locale of timezone-engine.ts gave ICU's numeric form, and kept by UTC offset in
 * minutes: a zone that changes its offset later falls back to the numeric form rather than a wrong name.
 *
 * What is deliberately not here: names tzdb dropped in 2017 as invented by its own editors and not in
 * common use, e.g. BRT (America/Sao_Paulo is "-03" in tzdb), TRT (Europe/Istanbul "+03"), ICT, SGT, AST
 * for Arabia; those zones keep the numeric form. Where CLDR does have a name that tzdb lacks (GST for
 * Asia/Dubai, IST for Asia/Colombo) ICU's is used: it comes first.
 */
export const TZDB_ABBREVIATIONS: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  "America/Dawson": { "-420": "MST" },
  "America/Havana": { "-300": "CST", "-240": "CDT" },
  "America/Hermosillo": { "-420": "MST" },
  "America/Mazatlan": { "-420": "MST" },
  "America/Whitehorse": { "-420": "MST" },
  "Asia/Hong_Kong": { 480: "HKT" },
  "Asia/Jakarta": { 420: "WIB" },
  "Asia/Jayapura": { 540: "WIT" },
  "Asia/Jerusalem": { 120: "IST", 180: "IDT" },
  "Asia/Karachi": { 300: "PKT" },
  "Asia/Macau": { 480: "CST" },
  "Asia/Makassar": { 480: "WITA" },
  "Asia/Manila": { 480: "PST" },
  "Asia/Pontianak": { 420: "WIB" },
  "Asia/Pyongyang": { 540: "KST" },
  "Asia/Seoul": { 540: "KST" },
  "Asia/Shanghai": { 480: "CST" },
  "Asia/Taipei": { 480: "CST" },
  "Asia/Tokyo": { 540: "JST" },
  "Europe/Guernsey": { 60: "BST" },
  "Europe/Isle_of_Man": { 60: "BST" },
  "Europe/Jersey": { 60: "BST" },
  "Europe/Kirov": { 180: "MSK" },
  "Europe/Moscow": { 180: "MSK" },
  "Europe/Simferopol": { 180: "MSK" },
  "Europe/Volgograd": { 180: "MSK" },
  "Pacific/Guam": { 600: "ChST" },
  "Pacific/Midway": { "-660": "SST" },
  "Pacific/Pago_Pago": { "-660": "SST" },
  "Pacific/Saipan": { 600: "ChST" },
};

/** tzdb's abbreviation for `timezone` at this UTC offset, if it has a name (not a number) for it. */
export function tzdbAbbreviation(timezone: string, offsetMinutes: number): string | undefined {
  const direct = TZDB_ABBREVIATIONS[timezone];
  // tz-lookup may name an alias (Asia/Chongqing): ICU's canonical name finds the table's entry.
  const entry =
    direct ??
    TZDB_ABBREVIATIONS[new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone];
  return entry?.[offsetMinutes];
}
