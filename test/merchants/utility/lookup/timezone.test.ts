import { describe, expect, it } from "vitest";
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
  it("falls back to GMT+n where CLDR has no abbreviation", () => {
    expect(timezoneAt(35.6762, 139.6503, SUMMER)).toMatchObject({
      timezone: "Asia/Tokyo",
      abbreviation: "GMT+9",
    });
  });
  it.each([
    [91, 0],
    [-90.5, 0],
    [0, 180.1],
    [Number.NaN, 0],
  ])("refuses %s, %s", (lat, lon) =>
    expect(() => timezoneAt(lat, lon)).toThrow(expect.objectContaining({ status: 400 })),
  );
});
