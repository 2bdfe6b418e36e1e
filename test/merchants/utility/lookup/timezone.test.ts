import { describe, expect, it } from "vitest";
import { tzdbAbbreviation } from "../../../../src/merchants/utility/lookup/timezone-abbreviations.ts";
import { timezoneAt } from "../../../../src/merchants/utility/lookup/timezone-engine.ts";

const SUMMER = new Date("2026-07-01T12:00:00Z");
const WINTER = new Date("2026-01-15T12:00:00Z");

describe("timezoneAt", () => {
  it("New York in summer and winter", () => {
    expect(timezoneAt(40.7128, -74.006, SUMMER)).toMatchObject({
      timezone: "America/New_York",
      utc_offset: "-04:00",
      utc_offset_minutes: -240,
      abbreviation: "EDT",
      dst_in_effect: true,
      local_time: "2026-07-01T08:00:00-04:00",
    });
    expect(timezoneAt(40.7128, -74.006, WINTER)).toMatchObject({
      abbreviation: "EST",
      dst_in_effect: false,
      utc_offset: "-05:00",
    });
  });
  it("Paris, Sydney (southern DST), Kolkata (half hour, no DST)", () => {
    expect(timezoneAt(48.8566, 2.3522, SUMMER)).toMatchObject({
      timezone: "Europe/Paris",
      abbreviation: "CEST",
      dst_in_effect: true,
    });
    expect(timezoneAt(-33.8688, 151.2093, WINTER)).toMatchObject({
      timezone: "Australia/Sydney",
      utc_offset: "+11:00",
      dst_in_effect: true,
    });
    expect(timezoneAt(-33.8688, 151.2093, SUMMER)).toMatchObject({
      abbreviation: "AEST",
      dst_in_effect: false,
    });
    expect(timezoneAt(22.5726, 88.3639, SUMMER)).toMatchObject({
      timezone: "Asia/Kolkata",
      utc_offset: "+05:30",
      abbreviation: "IST",
      local_time: "2026-07-01T17:30:00+05:30",
    });
  });
  // Issue 21: where CLDR has no English name, the tz database's own (MSK, JST, KST, IST/IDT); where tzdb
  // itself only has a number and none is in wide use (Sao Paulo "-03", Istanbul "+03"), the numeric form.
  it.each([
    ["Moscow", 55.7558, 37.6173, WINTER, "Europe/Moscow", "MSK"],
    ["Moscow", 55.7558, 37.6173, SUMMER, "Europe/Moscow", "MSK"],
    ["Tokyo", 35.6762, 139.6503, SUMMER, "Asia/Tokyo", "JST"],
    ["Seoul", 37.5665, 126.978, WINTER, "Asia/Seoul", "KST"],
    ["Jerusalem (winter)", 31.7683, 35.2137, WINTER, "Asia/Jerusalem", "IST"],
    ["Jerusalem (summer)", 31.7683, 35.2137, SUMMER, "Asia/Jerusalem", "IDT"],
    ["Havana (summer)", 23.1136, -82.3666, SUMMER, "America/Havana", "CDT"],
    ["Jakarta", -6.2088, 106.8456, SUMMER, "Asia/Jakarta", "WIB"],
    ["Sydney (summer)", -33.8688, 151.2093, WINTER, "Australia/Sydney", "AEDT"],
    ["Berlin (winter)", 52.52, 13.405, WINTER, "Europe/Berlin", "CET"],
    ["London (summer)", 51.5074, -0.1278, SUMMER, "Europe/London", "BST"],
    ["London (winter)", 51.5074, -0.1278, WINTER, "Europe/London", "GMT"],
    ["Dubai (CLDR's GST; tzdb says +04)", 25.2048, 55.2708, SUMMER, "Asia/Dubai", "GST"],
    ["Sao Paulo (tzdb -03)", -23.5505, -46.6333, WINTER, "America/Sao_Paulo", "GMT-3"],
    ["Istanbul (tzdb +03)", 41.0082, 28.9784, SUMMER, "Europe/Istanbul", "GMT+3"],
  ])("%s", (_name, lat, lon, at, timezone, abbreviation) => {
    expect(timezoneAt(lat as number, lon as number, at as Date)).toMatchObject({ timezone, abbreviation });
  });
  it.each([
    [91, 0],
    [-90.5, 0],
    [0, 180.1],
    [Number.NaN, 0],
  ])("refuses %s, %s", (lat, lon) =>
    expect(() => timezoneAt(lat, lon)).toThrow(expect.objectContaining({ status: 400 })),
  );
  it("finds tzdb's name by the zone's canonical name and only at the offset it was recorded for", () => {
    expect(tzdbAbbreviation("Asia/Chongqing", 480)).toBe("CST");
    expect(tzdbAbbreviation("Asia/Macao", 480)).toBe("CST");
    expect(tzdbAbbreviation("Europe/Moscow", 240)).toBeUndefined();
    expect(tzdbAbbreviation("America/Sao_Paulo", -180)).toBeUndefined();
  });
});
