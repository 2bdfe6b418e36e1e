import tzLookup from "@photostructure/tz-lookup";
import { BadInputError } from "../../../common/errors.ts";
import { tzdbAbbreviation } from "./timezone-abbreviations.ts";

export interface TimezoneResult {
  latitude: number;
  longitude: number;
  timezone: string;
  /** "+05:30", "-04:00", "+00:00". */
  utc_offset: string;
  utc_offset_minutes: number;
  abbreviation: string;
  dst_in_effect: boolean;
  /** Offset outside daylight saving time in this year. */
  standard_offset_minutes: number;
  /** Local wall-clock time with its offset, ISO 8601 to the second, e.g. "2026-07-01T08:00:00-04:00". */
  local_time: string;
  /** The instant the answer is for, UTC. */
  utc_time: string;
}

/**
 * The IANA zone at a point and what its clock says at `now`. The zone comes from tz-lookup's compact
 * raster of the timeanalyzer/timezone-boundary-builder polygons: exact inside a country, approximate within
 * a few kilometres of a border or coastline (ocean points get the nautical `Etc/GMT±n` zones). Offsets,
 * DST and abbreviations come from the ICU data of Node's `Intl`, so they follow the tz database Node ships.
 */
export function timezoneAt(latitude: number, longitude: number, now: Date = new Date()): TimezoneResult {
  if (!Number.isFinite(latitude) || latitude < -90 || latitude > 90) {
    throw new BadInputError("lat must be a number from -90 to 90", "invalid_coordinates");
  }
  if (!Number.isFinite(longitude) || longitude < -180 || longitude > 180) {
    throw new BadInputError("lon must be a number from -180 to 180", "invalid_coordinates");
  }
  const timezone = tzLookup(latitude, longitude);
  const offset = offsetMinutes(timezone, now);
  const year = now.getUTCFullYear();
  const standard = Math.min(
    offsetMinutes(timezone, new Date(Date.UTC(year, 0, 1))),
    offsetMinutes(timezone, new Date(Date.UTC(year, 6, 1))),
  );
  return {
    latitude,
    longitude,
    timezone,
    utc_offset: formatOffset(offset),
    utc_offset_minutes: offset,
    abbreviation: abbreviation(timezone, now, offset),
    // Daylight saving is any offset ahead of the year's lower one. (Europe/Dublin's tzdb "negative DST" and
    // zones that changed their standard offset during the year are read the same plain way.)
    dst_in_effect: offset > standard,
    standard_offset_minutes: standard,
    local_time: localIso(now, offset),
    utc_time: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
}

/** The zone's UTC offset at an instant, in minutes, from ICU's "GMT+05:30" form. */
export function offsetMinutes(timezone: string, at: Date): number {
  const name = timeZoneName(timezone, at, "en-US", "longOffset");
  const match = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(name);
  if (!match) throw new Error(`unexpected offset "${name}" for ${timezone}`);
  if (!match[1]) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === "-" ? -minutes : minutes;
}

/**
 * ICU only has an English short name ("EST", "CEST", "IST", "AEST") in the locale where it is in common
 * use, so ask a few English locales and take the first real abbreviation; then the tz database's own
 * (MSK, JST, KST: CLDR has none in English); zones with neither (America/Sao_Paulo, Europe/Istanbul: tzdb
 * itself says "-03", "+03") get ICU's numeric "GMT-3" form.
 */
const ABBREVIATION_LOCALES = ["en-US", "en-GB", "en-AU", "en-IN", "en-NZ", "en-CA", "en-IE", "en-ZA"];

function abbreviation(timezone: string, at: Date, offset: number): string {
  let fallback = "";
  for (const locale of ABBREVIATION_LOCALES) {
    const name = timeZoneName(timezone, at, locale, "short");
    if (!/^(GMT|UTC)[+-]/.test(name)) return name;
    fallback ||= name;
  }
  return tzdbAbbreviation(timezone, offset) ?? fallback;
}

function timeZoneName(timezone: string, at: Date, locale: string, style: "short" | "longOffset"): string {
  const parts = new Intl.DateTimeFormat(locale, { timeZone: timezone, timeZoneName: style }).formatToParts(
    at,
  );
  return parts.find((p) => p.type === "timeZoneName")?.value ?? "";
}

export function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

function localIso(at: Date, offset: number): string {
  const shifted = new Date(Math.floor(at.getTime() / 1000) * 1000 + offset * 60_000);
  return `${shifted.toISOString().slice(0, 19)}${formatOffset(offset)}`;
}
