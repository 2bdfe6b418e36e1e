import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { timezoneAt } from "./timezone-engine.ts";

/**
 * A decimal degree from the query, checked before any payment is asked for. A pattern rather than
 * `z.coerce.number()`, which would read an empty `lat=` as 0 and "1e2" as 100.
 */
const degrees = (limit: number) =>
  z
    .string()
    .trim()
    .regex(/^[+-]?(\d+(\.\d*)?|\.\d+)$/, "must be a number in decimal degrees, e.g. 40.7128")
    .transform(Number)
    .pipe(z.number().min(-limit).max(limit));

/**
 * `lat` with `lng` (the comparable x402 service, Google) or `lon` (OpenStreetMap, open-meteo): both are
 * accepted, one of them is needed.
 */
const TimezoneInput = z
  .object({
    lat: degrees(90).describe("Latitude in decimal degrees, -90 to 90."),
    lng: degrees(180).optional().describe("Longitude in decimal degrees, -180 to 180."),
    lon: degrees(180).optional().describe("Same as `lng`."),
  })
  .refine((q) => (q.lng ?? q.lon) !== undefined, {
    message: "give the longitude as `lng` or `lon`",
    path: ["lng"],
  })
  .refine((q) => q.lng === undefined || q.lon === undefined, {
    message: "give the longitude once, as `lng` or `lon`",
    path: ["lon"],
  });

const TimezoneOutput = z.object({
  latitude: z.number(),
  longitude: z.number(),
  timezone: z.string().describe("IANA time zone, e.g. `America/New_York`; approximate near borders."),
  utc_offset: z.string().describe("Current offset from UTC, `±HH:MM`."),
  utc_offset_minutes: z.number(),
  abbreviation: z
    .string()
    .describe(
      "Short name: CLDR's English one (`EDT`, `CEST`, `IST`, `AEST`, `GST`), else the tz database's (`MSK`, `JST`, `KST`), else the offset as `GMT-3` where the tz database itself has only a number (e.g. America/Sao_Paulo, Europe/Istanbul).",
    ),
  dst_in_effect: z.boolean(),
  standard_offset_minutes: z.number().describe("The zone's offset outside daylight saving time this year."),
  local_time: z.string().describe("Local time now with its offset, ISO 8601."),
  utc_time: z.string().describe("The instant of the answer, UTC."),
});

/** The endpoint for a given clock (tests pin the instant to check DST and non-DST answers). */
export function timezoneEndpoint(clock: () => Date = () => new Date()) {
  return defineEndpoint({
    method: "GET",
    path: "/api/timezone",
    price: PRICES["/api/timezone"],
    description:
      "Time zone at a latitude/longitude (`lat`, `lng` or `lon`): IANA zone, current UTC offset, abbreviation, DST status and local time. The zone comes from a compact boundary map: approximate near borders and coastlines.",
    input: TimezoneInput,
    output: TimezoneOutput,
    example: {
      input: { lat: "40.7128", lng: "-74.006" },
      output: {
        latitude: 40.7128,
        longitude: -74.006,
        timezone: "America/New_York",
        utc_offset: "-04:00",
        utc_offset_minutes: -240,
        abbreviation: "EDT",
        dst_in_effect: true,
        standard_offset_minutes: -300,
        local_time: "2026-07-01T08:00:00-04:00",
        utc_time: "2026-07-01T12:00:00Z",
      },
    },
    timeoutMs: 5_000,
    handler: async (input) => {
      const longitude = input.lng ?? input.lon;
      if (longitude === undefined)
        throw new BadInputError("give the longitude as `lng` or `lon`", "invalid_input");
      return timezoneAt(input.lat, longitude, clock());
    },
  });
}
