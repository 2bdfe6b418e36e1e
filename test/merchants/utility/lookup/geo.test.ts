import { describe, expect, it } from "vitest";
import { geoipLoadStats, locateIp } from "../../../../src/merchants/utility/lookup/geo-engine.ts";

describe("locateIp (geoip-lite 1.4.9 data)", () => {
  it("locates public IPv4 and IPv6 addresses", () => {
    expect(locateIp("81.2.69.160")).toMatchObject({
      country: "GB",
      region: "ENG",
      city: "St Albans",
      timezone: "Europe/London",
    });
    expect(locateIp("2a00:1450:4001:80b::200e")).toMatchObject({ country: "DE", timezone: "Europe/Berlin" });
    expect(locateIp("::ffff:81.2.69.160").country).toBe("GB");
    const stats = geoipLoadStats();
    expect(stats?.load_ms).toBeGreaterThanOrEqual(0);
  });
  it.each([
    "10.1.2.3",
    "127.0.0.1",
    "192.168.1.1",
    "100.64.0.1",
    "169.254.169.254",
    "::1",
    "fd00::1",
    "192.0.2.1",
    "224.0.0.1",
  ])("refuses the reserved address %s with a 400", (ip) =>
    expect(() => locateIp(ip)).toThrow(expect.objectContaining({ status: 400, code: "not_public_address" })),
  );
  it("refuses non-addresses and says when the database has nothing", () => {
    expect(() => locateIp("example.com")).toThrow(
      expect.objectContaining({ status: 400, code: "invalid_ip" }),
    );
    expect(() => locateIp("1.1.1.1")).toThrow(expect.objectContaining({ status: 404 }));
  });
});
