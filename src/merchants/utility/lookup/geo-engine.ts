import { createRequire } from "node:module";
import { isIP } from "node:net";
import { BadInputError, NotFoundError } from "../../../common/errors.ts";
import { blockedRange } from "../../../merchant-kit/fetch/index.ts";

/** What geoip-lite 1.4 answers for an address it knows (its own field names). */
interface GeoipRecord {
  range: [number, number] | number[][] | "";
  country: string;
  region: string;
  eu?: string;
  timezone?: string;
  city: string;
  ll: [number | null, number | null];
  metro?: number;
  area?: number;
}

interface Geoip {
  lookup(ip: string): GeoipRecord | null;
}

export interface GeoResult {
  ip: string;
  country: string;
  region: string | null;
  city: string | null;
  eu: boolean | null;
  timezone: string | null;
  ll: [number, number] | null;
  latitude: number | null;
  longitude: number | null;
  accuracy_radius_km: number | null;
}

/** Heap and time the geoip-lite data took to load, once per process (see README.md). */
export interface GeoLoadStats {
  load_ms: number;
  rss_added_mb: number;
}

let geoip: Geoip | undefined;
let loadStats: GeoLoadStats | undefined;

/**
 * geoip-lite reads its whole database (about 150 MB: city ranges, IPv6 ranges and names) synchronously
 * when it is first required. Requiring it lazily keeps that cost off processes that never answer
 * `/api/geo` (and off `serve --only reports`); the first geo request pays it once (about 0.1-0.3 s),
 * after that a lookup is a binary search over buffers in memory (microseconds).
 */
export function loadGeoip(): Geoip {
  if (geoip) return geoip;
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const require = createRequire(import.meta.url);
  geoip = require("geoip-lite") as Geoip;
  loadStats = {
    load_ms: Math.round(performance.now() - started),
    rss_added_mb: Math.round((process.memoryUsage().rss - rssBefore) / 1024 / 1024),
  };
  return geoip;
}

/** How long loading took and what it added to the process's memory, once loaded. */
export function geoipLoadStats(): GeoLoadStats | undefined {
  return loadStats;
}

/**
 * Locates a public IPv4 or IPv6 address with geoip-lite's bundled GeoLite2-derived data.
 * Refuses (400) what is not an address, and private, loopback, link-local, CGNAT, documentation,
 * multicast and other reserved addresses: they have no location, and saying so needs no lookup, so the
 * caller is not charged. A public address the database has no range for is a 404 (not charged either).
 */
export function locateIp(input: string): GeoResult {
  const ip = input.trim();
  if (isIP(ip) === 0)
    throw new BadInputError(`"${truncate(ip)}" is not an IPv4 or IPv6 address`, "invalid_ip");
  const blocked = blockedRange(ip);
  if (blocked !== null) {
    throw new BadInputError(
      `${ip} is not a public address (${blocked}): private and reserved addresses have no location`,
      "not_public_address",
    );
  }
  const record = loadGeoip().lookup(ip);
  if (!record || record.country === "") {
    throw new NotFoundError(`no location is known for ${ip}`, "location_unknown");
  }
  const [lat, lon] = record.ll;
  // geoip-lite leaves ll at [0, 0] (IPv6) or [null, null] (IPv4) when it only knows the country.
  const hasLl = lat !== null && lon !== null && !(lat === 0 && lon === 0);
  return {
    ip,
    country: record.country,
    region: record.region || null,
    city: record.city || null,
    eu: record.eu === "1" ? true : record.eu === "0" ? false : null,
    timezone: record.timezone || null,
    ll: hasLl ? [lat, lon] : null,
    latitude: hasLl ? lat : null,
    longitude: hasLl ? lon : null,
    accuracy_radius_km: record.area && record.area > 0 ? record.area : null,
  };
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
