/**
 * The Bazaar: the resources this facilitator settled payments for, kept in PostgreSQL so it
 * survives restarts and is shared by every process on one server. A resource enters it only through a
 * successful settlement of a payment that carries a valid `bazaar` extension (the spec: no extension, no
 * listing); its accepted payment requirements are the ones that were actually paid.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  type DiscoveryResource,
  type DiscoveryResourcesResponse,
  extractDiscoveryInfo,
} from "@x402/extensions/bazaar";
import { groupedWriter } from "../common/db/grouped.ts";
import type { Database, Queryable } from "../common/db/index.ts";
import { BadInputError } from "../common/errors.ts";
import { validateBazaarExtension } from "./bazaar-extension.ts";

/** The outcome for the spec's EXTENSION-RESPONSES side channel (`bazaar.status`). */
export type BazaarOutcome = { status: "success" } | { status: "rejected"; rejectedReason: string };

/**
 * Catalogues the resource a settled payment paid for. Returns undefined when the payment carries no
 * `bazaar` extension, "rejected" when it carries one that fails validation. One write alone: a
 * facilitator records through `bazaarRecorder`, which groups concurrent settlements' writes.
 */
export function recordInBazaar(
  db: Database,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<BazaarOutcome | undefined> {
  return bazaarRecorder(db).record(payload, requirements);
}

export interface BazaarRecorder {
  /** Validates the payment's extension and, when it is valid, lists its resource (committed on return). */
  record(payload: PaymentPayload, requirements: PaymentRequirements): Promise<BazaarOutcome | undefined>;
  /** Waits for the writes under way. */
  drain(): Promise<void>;
}

/**
 * The Bazaar's writer for one process. Every settlement of a resource updates that resource's one row
 * (its payment count, its latest description), so concurrent settlements would queue on the row's lock,
 * one transaction each: their writes are grouped instead (common/db/grouped.ts), each resource's row
 * taking every payment of the group at once and the latest content, as the same writes one by one would
 * have left it.
 */
export function bazaarRecorder(db: Database): BazaarRecorder {
  const writer = groupedWriter(async (batch: readonly Listing[]) => {
    await writeListings(db, batch);
    return undefined;
  });
  return {
    async record(payload, requirements) {
      const listing = listingOf(payload, requirements);
      if (!listing || "status" in listing) return listing;
      await writer.write(listing);
      return { status: "success" };
    },
    drain: () => writer.drain(),
  };
}

/** What one settlement puts in the Bazaar. */
interface Listing {
  found: NonNullable<ReturnType<typeof extractDiscoveryInfo>>;
  toolName: string;
  requirements: PaymentRequirements;
}

/** The listing a settled payment makes, its extension's rejection, or undefined without one. */
function listingOf(
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Listing | BazaarOutcome | undefined {
  if (!payload.extensions || !("bazaar" in payload.extensions)) return undefined;
  // Validates `info` against its `schema`, as the spec requires of a facilitator (the payload is the
  // buyer's echo: untrusted). What `extractDiscoveryInfo(..., true)` does for a v2 payload (v1 carries no
  // schema), with each distinct schema compiled once instead of on every settlement.
  const extension: unknown = payload.extensions.bazaar;
  if (payload.x402Version === 2 && extension !== null && typeof extension === "object") {
    const result = validateBazaarExtension(extension);
    if (!result.valid) {
      return {
        status: "rejected",
        rejectedReason: `the bazaar extension failed validation: ${summary(result.errors)}`,
      };
    }
  }
  let found: ReturnType<typeof extractDiscoveryInfo>;
  try {
    // The route template and the service metadata are checked (and sanitised) here, validate or not.
    found = extractDiscoveryInfo(payload, requirements, false);
  } catch (error) {
    return { status: "rejected", rejectedReason: `unusable resource: ${(error as Error).message}` };
  }
  if (!found) return { status: "rejected", rejectedReason: "the bazaar extension failed validation" };
  return { found, toolName: "toolName" in found ? found.toolName : "", requirements };
}

/**
 * Writes a group of listings in one statement: each resource once, with the group's payments and its
 * last listing's content; each accepted requirement once, the last. One statement is one transaction and
 * one round trip (a transaction of its own took four: BEGIN, the two upserts, COMMIT). The resources are
 * written first (the accepts wait on them) and each table's rows in key order, so two processes writing
 * overlapping groups take their locks in the same order and never deadlock.
 */
async function writeListings(db: Queryable, batch: readonly Listing[]): Promise<void> {
  const resources = new Map<string, { listing: Listing; payments: number }>();
  const accepts = new Map<string, Listing>();
  for (const listing of batch) {
    const { found, toolName, requirements: r } = listing;
    const key = JSON.stringify([found.resourceUrl, toolName]);
    resources.set(key, { listing, payments: (resources.get(key)?.payments ?? 0) + 1 });
    accepts.set(
      JSON.stringify([
        found.resourceUrl,
        toolName,
        r.scheme,
        r.network,
        r.asset.toLowerCase(),
        r.payTo.toLowerCase(),
      ]),
      listing,
    );
  }
  const rs = [...resources].sort(byKey).map(([, value]) => value);
  const as = [...accepts].sort(byKey).map(([, listing]) => listing);
  await db.query(
    `WITH written AS (
       INSERT INTO bazaar_resources AS r
         (resource, tool_name, type, x402_version, method, description, mime_type, service_name, tags,
          icon_url, extensions, payments)
       SELECT resource, tool_name, type, x402_version, method, description, mime_type, service_name,
         tags::jsonb, icon_url, extensions::jsonb, payments
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[],
         $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[])
         AS t(resource, tool_name, type, x402_version, method, description, mime_type, service_name, tags,
           icon_url, extensions, payments)
       ON CONFLICT (resource, tool_name) DO UPDATE SET
         type = EXCLUDED.type, x402_version = EXCLUDED.x402_version, method = EXCLUDED.method,
         description = EXCLUDED.description, mime_type = EXCLUDED.mime_type,
         service_name = EXCLUDED.service_name, tags = EXCLUDED.tags, icon_url = EXCLUDED.icon_url,
         extensions = EXCLUDED.extensions, payments = r.payments + EXCLUDED.payments, last_updated = now()
       RETURNING 1
     )
     INSERT INTO bazaar_accepts (resource, tool_name, scheme, network, asset, pay_to, requirements)
     SELECT resource, tool_name, scheme, network, asset, pay_to, requirements::jsonb
     FROM unnest($13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[])
       AS t(resource, tool_name, scheme, network, asset, pay_to, requirements)
     -- Evaluated once, before the first accept: every resource is written (and locked) first.
     WHERE (SELECT count(*) FROM written) > 0
     ON CONFLICT (resource, tool_name, scheme, network, asset, pay_to) DO UPDATE SET
       requirements = EXCLUDED.requirements, last_updated = now()`,
    [
      rs.map(({ listing }) => listing.found.resourceUrl),
      rs.map(({ listing }) => listing.toolName),
      rs.map(({ listing }) => listing.found.discoveryInfo.input.type),
      rs.map(({ listing }) => listing.found.x402Version),
      rs.map(({ listing: { found } }) => ("method" in found ? (found.method ?? null) : null)),
      rs.map(({ listing }) => listing.found.description ?? null),
      rs.map(({ listing }) => listing.found.mimeType ?? null),
      rs.map(({ listing }) => listing.found.serviceName ?? null),
      rs.map(({ listing }) => (listing.found.tags ? JSON.stringify(listing.found.tags) : null)),
      rs.map(({ listing }) => listing.found.iconUrl ?? null),
      rs.map(({ listing }) => (listing.found.extensions ? JSON.stringify(listing.found.extensions) : null)),
      rs.map(({ payments }) => payments),
      as.map((listing) => listing.found.resourceUrl),
      as.map((listing) => listing.toolName),
      as.map((listing) => listing.requirements.scheme),
      as.map((listing) => listing.requirements.network),
      as.map((listing) => listing.requirements.asset.toLowerCase()),
      as.map((listing) => listing.requirements.payTo.toLowerCase()),
      as.map((listing) => JSON.stringify(listing.requirements)),
    ],
  );
}

const byKey = <V>(a: [string, V], b: [string, V]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** The first validation errors, short enough for the EXTENSION-RESPONSES header. */
function summary(errors: string[]): string {
  const text = errors.slice(0, 3).join("; ") + (errors.length > 3 ? ` (+${errors.length - 3} more)` : "");
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** Filters and page of GET /discovery/resources (the Bazaar spec's list parameters). */
export interface DiscoveryQuery {
  type?: "http" | "mcp";
  payTo?: string;
  scheme?: string;
  network?: string;
  /** An extension key the resource's payments carried, e.g. "bazaar". */
  extensions?: string;
  limit: number;
  offset: number;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/**
 * Reads the query string of GET /discovery/resources; a bad value is a 400 naming the parameter. A
 * `limit` out of 1-100 is clamped into it, as the official facilitators do, so a crawler asking for 1000
 * gets a page rather than an error.
 */
export function parseDiscoveryQuery(params: Record<string, string | undefined>): DiscoveryQuery {
  const limit = integer(params.limit, "limit", DEFAULT_LIMIT, 0, Number.MAX_SAFE_INTEGER);
  const query: DiscoveryQuery = {
    limit: Math.min(MAX_LIMIT, Math.max(1, limit)),
    offset: integer(params.offset, "offset", 0, 0, Number.MAX_SAFE_INTEGER),
  };
  if (params.type !== undefined) {
    if (params.type !== "http" && params.type !== "mcp") {
      throw new BadInputError(`type must be "http" or "mcp", not "${params.type}"`, "bad_type");
    }
    query.type = params.type;
  }
  if (params.payTo !== undefined) {
    if (!/^0x[0-9a-fA-F]{40}$/.test(params.payTo)) {
      throw new BadInputError(
        `payTo must be an 0x-prefixed 20-byte address, not "${params.payTo}"`,
        "bad_pay_to",
      );
    }
    query.payTo = params.payTo.toLowerCase();
  }
  for (const name of ["scheme", "network", "extensions"] as const) {
    const value = params[name];
    if (value === undefined) continue;
    if (!/^[\w:.*-]{1,64}$/.test(value)) throw new BadInputError(`bad ${name} "${value}"`, `bad_${name}`);
    query[name] = value;
  }
  return query;
}

function integer(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new BadInputError(
      `${name} must be a whole number from ${min} to ${max}, not "${value}"`,
      `bad_${name}`,
    );
  }
  return Number(value);
}

interface ResourceRow {
  resource: string;
  type: string;
  x402_version: number;
  description: string | null;
  mime_type: string | null;
  service_name: string | null;
  tags: string[] | null;
  icon_url: string | null;
  extensions: Record<string, unknown> | null;
  last_updated: Date;
  accepts: PaymentRequirements[];
}

/**
 * One page of the Bazaar, most recently paid first, in the shape of `@x402/extensions`'
 * `DiscoveryResourcesResponse` (`lastUpdated` an ISO 8601 string, as those types define it).
 */
export async function listResources(
  db: Queryable,
  query: DiscoveryQuery,
): Promise<DiscoveryResourcesResponse> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (query.type) where.push(`r.type = ${param(query.type)}`);
  const accept: string[] = [];
  if (query.payTo) accept.push(`a.pay_to = ${param(query.payTo)}`);
  if (query.scheme) accept.push(`a.scheme = ${param(query.scheme)}`);
  if (query.network) accept.push(`a.network = ${param(query.network)}`);
  if (accept.length > 0) {
    where.push(`EXISTS (SELECT 1 FROM bazaar_accepts a
      WHERE a.resource = r.resource AND a.tool_name = r.tool_name AND ${accept.join(" AND ")})`);
  }
  if (query.extensions) where.push(`r.extensions ? ${param(query.extensions)}`);
  const filter = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";

  const total = await db.query<{ n: bigint }>(`SELECT count(*) AS n FROM bazaar_resources r ${filter}`, [
    ...params,
  ]);
  const page = await db.query<ResourceRow>(
    `SELECT r.resource, r.type, r.x402_version, r.description, r.mime_type, r.service_name, r.tags,
            r.icon_url, r.extensions, r.last_updated,
            (SELECT json_agg(a.requirements ORDER BY a.last_updated DESC, a.pay_to)
             FROM bazaar_accepts a WHERE a.resource = r.resource AND a.tool_name = r.tool_name) AS accepts
     FROM bazaar_resources r ${filter}
     ORDER BY r.last_updated DESC, r.resource, r.tool_name
     LIMIT ${param(query.limit)} OFFSET ${param(query.offset)}`,
    params,
  );
  return {
    x402Version: 2,
    items: page.rows.map(toItem),
    pagination: { limit: query.limit, offset: query.offset, total: Number(total.rows[0]?.n ?? 0n) },
  };
}

function toItem(row: ResourceRow): DiscoveryResource {
  const item: DiscoveryResource = {
    resource: row.resource,
    type: row.type,
    x402Version: row.x402_version,
    accepts: row.accepts ?? [],
    lastUpdated: row.last_updated.toISOString(),
  };
  if (row.description !== null) item.description = row.description;
  if (row.mime_type !== null) item.mimeType = row.mime_type;
  if (row.service_name !== null) item.serviceName = row.service_name;
  if (row.tags !== null) item.tags = row.tags;
  if (row.icon_url !== null) item.iconUrl = row.icon_url;
  if (row.extensions !== null) item.extensions = row.extensions;
  return item;
}
