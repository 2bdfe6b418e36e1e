import { z } from "zod";
import { BadInputError } from "../../../common/errors.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
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
      "IPv4 or IPv6 address to locate, e.g. `8.8.8.8` or `2606:4700:4700::1111`. Omitted: the caller's own address as the reverse proxy reports it (`X-Forwarded-For`, `X-Real-IP`).",
    ),
});

const GeoSource = z
  .object({
    database: z.string().describe("The data: `DB-IP IP to City Lite`."),
    build_date: z
      .string()
      .describe(
        "UTC date (YYYY-MM-DD) the database file was built, from its own metadata (DB-IP publishes monthly).",
      ),
    license: z.string().describe("`CC BY 4.0`: whoever shows or uses the answer must credit DB-IP."),
    attribution: z
      .string()
      .describe("The credit the licence asks for: `IP Geolocation by DB-IP`, linked to `url`."),
    url: z.string().describe("`https://db-ip.com`, the link the credit points to."),
  })
  .describe("Where the location comes from, when it was built and the credit its licence requires.");

const GeoOutput = z.object({
  ip: z.string().describe("The address looked up."),
  country: z.string().describe("ISO 3166-1 alpha-2 country code (`XK` for Kosovo)."),
  region: z
    .string()
    .nullable()
    .describe(
      "First-level subdivision as DB-IP names it, in English (e.g. `England`, `California`, `Hesse`): a name, not an ISO 3166-2 code; null when the data has none.",
    ),
  city: z.string().nullable().describe("City (DB-IP sometimes adds the district in parentheses)."),
  eu: z
    .boolean()
    .describe(
      "Whether EU law applies in the country: the 27 member states, France's outermost regions and Åland, from the country code (DB-IP has no such flag).",
    ),
  timezone: z
    .string()
    .nullable()
    .describe("IANA time zone at the coordinates (DB-IP Lite gives none: derived as `/api/timezone` does)."),
  ll: z
    .tuple([z.number(), z.number()])
    .nullable()
    .describe("[latitude, longitude], the same as the two fields."),
  latitude: z
    .number()
    .nullable()
    .describe("Of the city DB-IP places the address in, not of the address itself."),
  longitude: z.number().nullable(),
  accuracy_radius_km: z
    .number()
    .nullable()
    .describe(
      "Always null: DB-IP Lite publishes no accuracy radius. City-level IP data is often tens of km off.",
    ),
  source: GeoSource,
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
  price: PRICES["/api/geo"],
  description:
    "IP geolocation: country, region, city, coordinates and IANA time zone of a public IPv4 or IPv6 address (query `ip`, default the caller's), from DB-IP's IP to City Lite database (monthly; `source.build_date` says which build answered). IP Geolocation by DB-IP (https://db-ip.com), licensed CC BY 4.0: show that credit, linked, wherever the answer is shown or used. Private and reserved addresses are refused with a 400, and a public address the data has no location for is a 404: neither is charged.",
  input: GeoInput,
  output: GeoOutput,
  example: {
    input: { ip: "8.8.8.8" },
    output: {
      ip: "8.8.8.8",
      country: "US",
      region: "California",
      city: "Mountain View",
      eu: false,
      timezone: "America/Los_Angeles",
      ll: [37.422, -122.085],
      latitude: 37.422,
      longitude: -122.085,
      accuracy_radius_km: null,
      source: {
        database: "DB-IP IP to City Lite",
        build_date: "2026-06-05",
        license: "CC BY 4.0",
        attribution: "IP Geolocation by DB-IP",
        url: "https://db-ip.com",
      },
    },
  },
  timeoutMs: 5_000,
  errors: {
    400: "Without `ip`, the caller's own address (X-Forwarded-For, X-Real-IP) is missing, private or reserved.",
    404: "No location is known for the address (location_unknown).",
  },
  handler: async (input, ctx) => {
    const ip = input.ip ?? callerIp(ctx.request);
    if (ip === undefined) throw new BadInputError("give the address to locate as `ip`", "invalid_input");
    return locateIp(ip);
  },
});
