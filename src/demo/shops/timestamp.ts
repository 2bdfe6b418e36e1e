import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";

/** The largest instant a JavaScript Date holds: ±8.64 × 10^15 ms. */
const MAX_MS = 8.64e15;

const TimestampInput = z.object({
  ts: z
    .string()
    .trim()
    .regex(/^-?\d{1,16}$/, "a whole number of seconds (or milliseconds with unit=ms)")
    .transform(Number)
    .describe("Unix timestamp, e.g. 1700000000; negative before 1970."),
  unit: z.enum(["s", "ms"]).default("s").describe("Unit of `ts`: s (seconds, default) or ms."),
  tz: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .default("UTC")
    .describe("IANA time zone for the local time, e.g. Europe/Paris. Default UTC."),
});

const TimestampOutput = z.object({
  unix_seconds: z.number().int(),
  unix_ms: z.number().int(),
  iso_utc: z.string().describe("ISO 8601 in UTC."),
  timezone: z.string(),
  local: z.string().describe("ISO 8601 local time in the zone, with its offset."),
  offset: z.string().describe("The zone's UTC offset at that instant, e.g. +01:00."),
  weekday: z.string().describe("Day of the week in the zone, in English."),
});

const pad = (n: number | string, w = 2) => String(n).padStart(w, "0");

export function convertTimestamp(ms: number, tz: string): z.output<typeof TimestampOutput> {
  if (Math.abs(ms) > MAX_MS) throw new BadInputError("the timestamp is outside the range of dates");
  let fmt: Intl.DateTimeFormat;
  try {
    fmt = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      weekday: "long",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      timeZoneName: "longOffset",
      era: "short",
    });
  } catch {
    throw new BadInputError(
      `unknown time zone "${tz}"; use an IANA name such as Europe/Paris`,
      "bad_timezone",
    );
  }
  const date = new Date(ms);
  const parts = Object.fromEntries(fmt.formatToParts(date).map((p) => [p.type, p.value]));
  const offsetRaw = (parts.timeZoneName ?? "GMT").replace("GMT", "");
  const offset = offsetRaw === "" ? "+00:00" : offsetRaw.replace("\u2212", "-");
  const yearNum = Number(parts.year) * (parts.era === "BC" ? -1 : 1) + (parts.era === "BC" ? 1 : 0);
  const year =
    yearNum < 0 ? `-${pad(-yearNum, 6)}` : yearNum > 9999 ? `+${pad(yearNum, 6)}` : pad(yearNum, 4);
  const frac = ((ms % 1000) + 1000) % 1000;
  const local = `${year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${frac ? `.${pad(frac, 3)}` : ""}${offset}`;
  return {
    unix_seconds: Math.floor(ms / 1000),
    unix_ms: ms,
    iso_utc: date.toISOString(),
    timezone: fmt.resolvedOptions().timeZone,
    local,
    offset,
    weekday: parts.weekday ?? "",
  };
}

export const convert = defineEndpoint({
  method: "GET",
  path: "/convert",
  price: "0.002",
  description:
    "Converts a Unix timestamp to ISO 8601 in UTC and in any IANA time zone, with the zone's offset and the weekday.",
  input: TimestampInput,
  output: TimestampOutput,
  example: {
    input: { ts: "1700000000", tz: "Europe/Paris" },
    output: {
      unix_seconds: 1700000000,
      unix_ms: 1700000000000,
      iso_utc: "2023-11-14T22:13:20.000Z",
      timezone: "Europe/Paris",
      local: "2023-11-14T23:13:20+01:00",
      offset: "+01:00",
      weekday: "Tuesday",
    },
  },
  errors: {
    400: "A timestamp outside the range of dates, or an unknown time zone (bad_request, bad_timezone), found once the payment is verified.",
  },
  handler: async (q) => convertTimestamp(q.unit === "s" ? q.ts * 1000 : q.ts, q.tz),
});
