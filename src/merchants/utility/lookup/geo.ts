import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import { defineEndpoint } from "../../../merchant-kit/catalogue.ts";
import { locateIp, refuseAddress } from "./geo-engine.ts";

/** `ip` is what comparable geo APIs (ipapi, ipinfo-style x402 services) take. */
const GeoInput = z.object({
  ip: z
    .string()
    .min(2)
    .max(64)
    // Checked before any payment is asked for, so a refused address costs the caller no signature.
    .superRefine((value, ctx) => {
      const refusal = refuseAddress(value.trim());
      if (refusal) ctx.addIssue({ code: "custom", message: refusal.message });
    })
    .optional()
    .describe(
      "IPv4 or IPv6 address to locate, e.g. `81.2.69.160` or `2a00:1450:4001:80b::200e`. Omitted: the caller's own address as the reverse proxy reports it (`X-Forwarded-For`, `X-Real-IP`).",
    ),
});

const GeoOutput = z.object({
  ip: z.string().describe("The address looked up."),
  country: z.string().describe("ISO 3166-1 alpha-2 country code."),
  region: z
    .string()
    .nullable()
    .describe("Subdivision code (ISO 3166-2 suffix, e.g. `ENG`, `CA`), when known."),
  city: z.string().nullable(),
  eu: z.boolean().nullable().describe("Whether the country is in the European Union."),
  timezone: z.string().nullable().describe("IANA time zone of the location."),
  ll: z.tuple([z.number(), z.number()]).nullable().describe("[latitude, longitude] (geoip-lite's field)."),
  latitude: z.number().nullable(),
  longitude: z.number().nullable(),
  accuracy_radius_km: z.number().nullable().describe("Radius around the coordinates the address is within."),
});

/** The caller's address as the proxy in front of us wrote it. Only used for the caller's own location,
 * so a forged header only misleads the one who forged it. */
function callerIp(request: Request): string | undefined {
  const forwarded = request.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  return forwarded || request.headers.get("x-real-ip")?.trim() || undefined;
}

export const geo = defineEndpoint({
  method: "GET",
  path: "/api/geo",
  price: "0.001",
  description:
    "IP geolocation: country, region, city, coordinates and IANA time zone of a public IPv4 or IPv6 address (query `ip`, default the caller's), from the bundled GeoLite2-derived database of geoip-lite. Private and reserved addresses are refused with a 400 and not charged.",
  input: GeoInput,
  output: GeoOutput,
  example: {
    input: { ip: "81.2.69.160" },
    output: {
      ip: "81.2.69.160",
      country: "GB",
      region: "ENG",
      city: "St Albans",
      eu: false,
      timezone: "Europe/London",
      ll: [51.753, -0.3256],
      latitude: 51.753,
      longitude: -0.3256,
      accuracy_radius_km: 100,
    },
  },
  timeoutMs: 5_000,
  handler: async (input, ctx) => {
    const ip = input.ip ?? callerIp(ctx.request);
    if (ip === undefined) throw new BadInputError("give the address to locate as `ip`", "invalid_input");
    return locateIp(ip);
  },
});
