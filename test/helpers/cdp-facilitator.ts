/**
 * A stand-in for a hosted facilitator on 127.0.0.1, in front of the project's own: it checks each
 * request's credentials, then forwards `/verify`, `/settle` and `/supported` to the facilitator behind it
 * (which settles on a devnet for real). Credentials are checked as Coinbase's CDP documents its API key
 * JWTs (docs.cdp.coinbase.com, "JWT Authentication"): `Authorization: Bearer <JWT>`, signed ES256 (EC P-256)
 * or EdDSA (Ed25519) with the key whose id is the header's `kid`, a header `nonce` used once, claims `iss`
 * "cdp", `sub` the key id, `nbf`/`exp` at most 2 minutes apart and around now, no audience unless one is
 * expected, and `uris` naming exactly this request ("POST 127.0.0.1:PORT/platform/v2/x402/settle").
 * Or, simpler, a fixed bearer token. It can also fail on demand: answer 503, stop, or drop a connection
 * before or after forwarding a settlement.
 */
import {
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** The CDP API key a test signs with: its id, its secret as CDP hands it out, and its public half. */
export interface TestCdpKey {
  apiKeyId: string;
  /** EC: SEC1 PEM, as Coinbase's portal gives it; Ed25519: base64 of seed and public key (64 bytes). */
  apiKeySecret: string;
  publicKey: KeyObject;
}

export function testCdpKey(
  kind: "ec" | "ed25519",
  apiKeyId = `organizations/test/apiKeys/${kind}`,
): TestCdpKey {
  if (kind === "ec") {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return {
      apiKeyId,
      apiKeySecret: privateKey.export({ format: "pem", type: "sec1" }).toString(),
      publicKey,
    };
  }
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const secret = Buffer.concat([
    Buffer.from(jwk.d as string, "base64url"),
    Buffer.from(jwk.x as string, "base64url"),
  ]);
  return { apiKeyId, apiKeySecret: secret.toString("base64"), publicKey };
}

/** Signs a JWT with `key` as CDP's would be, with the claims and header given: for tokens that must fail. */
export function signTestJwt(
  key: TestCdpKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): string {
  const ed = key.publicKey.asymmetricKeyType === "ed25519";
  const head = {
    alg: ed ? "EdDSA" : "ES256",
    kid: key.apiKeyId,
    typ: "JWT",
    nonce: randomNonce(),
    ...header,
  };
  const input = `${b64(head)}.${b64(claims)}`;
  const privateKey = ed
    ? createPrivateKey({
        key: {
          kty: "OKP",
          crv: "Ed25519",
          d: Buffer.from(key.apiKeySecret, "base64").subarray(0, 32).toString("base64url"),
          x: Buffer.from(key.apiKeySecret, "base64").subarray(32).toString("base64url"),
        },
        format: "jwk",
      })
    : createPrivateKey(key.apiKeySecret);
  const signature = ed
    ? sign(null, Buffer.from(input), privateKey)
    : sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" });
  return `${input}.${signature.toString("base64url")}`;
}

export type Auth =
  | { cdp: { apiKeyId: string; publicKey: KeyObject; audience?: string } }
  | { bearer: string }
  | null;

/** What the stand-in does with the next requests. */
export type Mode =
  /** Checks, forwards, answers. */
  | "serve"
  /** 503 to everything, nothing forwarded (a gateway in front of a facilitator that is down). */
  | "unavailable"
  /** Forwards a settlement, waits for its answer (the transaction mined), then cuts the connection. */
  | "drop-after-settle"
  /** Cuts the connection of a settlement without forwarding it. */
  | "drop-before-settle"
  /**
   * Forwards a settlement and cuts its connection when the test says (`cutSettlements`), the facilitator
   * behind going on with it: a settlement whose transaction may be waiting for its block when it is cut.
   */
  | "cut-when-told";

export interface StandIn {
  /** Its base URL, path included: `http://127.0.0.1:PORT/platform/v2/x402`. */
  url: string;
  mode: Mode;
  /**
   * An outage that starts at the settlement after the first `afterSettles` ones: from then on it answers
   * 503 ("unavailable"), or it stops, cutting the requests under way and refusing connections ("stopped").
   */
  outage?: { afterSettles: number; as: "unavailable" | "stopped" };
  /** Requests that passed the credentials check, by path ("verify", "settle", "supported"). */
  calls: Record<string, number>;
  /** Settlements forwarded to the facilitator behind it. */
  settlesForwarded: number;
  /** Why each refused request was refused ("exp is past", "uris ..."). */
  refusals: string[];
  /** The headers of every request that reached it, credentials passed or not. */
  seen: http.IncomingHttpHeaders[];
  /** Cuts the connections of the settlements under way (mode `cut-when-told`); how many it cut. */
  cutSettlements(): number;
  /** Stops listening: connections are refused from then on. */
  close(): Promise<void>;
}

export const CDP_BASE_PATH = "/platform/v2/x402";
/** Clock skew allowed on `nbf` and `exp`. */
const SKEW_S = 5;
const LIFETIME_S = 120;

/** Starts the stand-in in front of the facilitator at `upstream`, checking `auth`. */
export async function startStandIn(upstream: string, auth: Auth, basePath = CDP_BASE_PATH): Promise<StandIn> {
  const nonces = new Set<string>();
  const settling = new Set<http.IncomingMessage>();
  const state: Omit<StandIn, "url" | "close" | "cutSettlements"> = {
    mode: "serve",
    calls: {},
    settlesForwarded: 0,
    refusals: [],
    seen: [],
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      state.seen.push(req.headers);
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const url = new URL(req.url ?? "/", "http://stand-in");
      const op = url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length + 1) : "";
      const method = op === "supported" ? "GET" : "POST";
      if (!["verify", "settle", "supported"].includes(op) || req.method !== method)
        return answer(404, { errorType: "not_found", errorMessage: `no ${req.method} ${url.pathname}` });
      const refusal = checkAuth(auth, req, url.pathname, nonces);
      if (refusal) {
        state.refusals.push(refusal);
        return answer(401, { errorType: "unauthorized", errorMessage: refusal });
      }
      const outage = state.outage;
      if (op === "settle" && outage && (state.calls.settle ?? 0) >= outage.afterSettles) {
        if (outage.as === "stopped") return void stop();
        state.mode = "unavailable";
      }
      if (state.mode === "unavailable")
        return answer(503, { errorType: "unavailable", errorMessage: "down" });
      if (op === "settle" && state.mode === "drop-before-settle") return req.socket.destroy();
      state.calls[op] = (state.calls[op] ?? 0) + 1;
      if (op === "settle" && state.mode === "cut-when-told") settling.add(req);
      try {
        const forwarded = await fetch(`${upstream}/${op}`, {
          method,
          headers: { "content-type": "application/json" },
          body: method === "POST" ? Buffer.concat(chunks) : undefined,
        });
        const text = await forwarded.text();
        settling.delete(req);
        if (op === "settle") state.settlesForwarded++;
        if (op === "settle" && state.mode === "drop-after-settle") return req.socket.destroy();
        const extension = forwarded.headers.get("extension-responses");
        res.writeHead(forwarded.status, {
          "content-type": "application/json",
          ...(extension ? { "extension-responses": extension } : {}),
        });
        res.end(text);
      } catch (error) {
        answer(502, { errorType: "upstream", errorMessage: String(error) });
      }
    });
  });
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return stopped;
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}${basePath}`,
    cutSettlements: () => {
      const cut = settling.size;
      for (const held of settling) held.socket.destroy();
      settling.clear();
      return cut;
    },
    close: stop,
  });
}

/** Why the request's credentials are refused, or null. */
function checkAuth(auth: Auth, req: http.IncomingMessage, path: string, nonces: Set<string>): string | null {
  if (!auth) return null;
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  if (!bearer) return "no bearer token";
  if ("bearer" in auth) return bearer === auth.bearer ? null : "wrong bearer token";
  const { apiKeyId, publicKey, audience } = auth.cdp;
  const parts = bearer.split(".");
  if (parts.length !== 3) return "not a JWT";
  const [head, body, signature] = parts as [string, string, string];
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(head, "base64url").toString("utf8"));
    claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return "not a JWT";
  }
  const ed = publicKey.asymmetricKeyType === "ed25519";
  if (header.alg !== (ed ? "EdDSA" : "ES256")) return `alg ${String(header.alg)} is not the key's`;
  if (header.kid !== apiKeyId) return "kid is not the key's id";
  if (typeof header.nonce !== "string" || header.nonce.length < 16) return "no nonce";
  const input = Buffer.from(`${head}.${body}`);
  const sig = Buffer.from(signature, "base64url");
  const valid = ed
    ? verify(null, input, publicKey, sig)
    : verify("sha256", input, { key: publicKey, dsaEncoding: "ieee-p1363" }, sig);
  if (!valid) return "bad signature";
  if (claims.iss !== "cdp") return "iss is not cdp";
  if (claims.sub !== apiKeyId) return "sub is not the key's id";
  const now = Math.floor(Date.now() / 1000);
  const { nbf, exp } = claims as { nbf?: unknown; exp?: unknown };
  if (typeof nbf !== "number" || typeof exp !== "number") return "no nbf or exp";
  if (nbf > now + SKEW_S) return "nbf is in the future";
  if (exp <= now - SKEW_S) return "exp is past";
  if (exp - nbf > LIFETIME_S) return "lives longer than 2 minutes";
  if (claims.aud !== undefined) {
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audience || !audiences.includes(audience)) return "aud is not this service";
  } else if (audience) return "no aud";
  const uri = `${req.method} ${req.headers.host}${path}`;
  if (!Array.isArray(claims.uris) || claims.uris.length !== 1 || claims.uris[0] !== uri)
    return `uris is not ["${uri}"]`;
  // A token is good for one request: a replayed one (its nonce seen) is refused.
  if (nonces.has(header.nonce)) return "nonce used before";
  nonces.add(header.nonce);
  return null;
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function randomNonce(): string {
  return randomBytes(16).toString("hex");
}
