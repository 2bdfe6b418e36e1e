import type { DetailedPeerCertificate } from "node:tls";

/** The server certificate as the report shows it. */
export interface CertificateReport {
  subject: string | null;
  subject_alt_names: string[];
  issuer: string | null;
  valid_from: string;
  valid_to: string;
  /** Whole days until `valid_to` (negative once expired). */
  days_remaining: number;
  expired: boolean;
  fingerprint_sha256: string;
  serial_number: string;
  /** Chain and host name verified against the trusted CA store (Node's bundled Mozilla roots). */
  trusted: boolean;
  /** OpenSSL's or Node's code when not trusted, e.g. `DEPTH_ZERO_SELF_SIGNED_CERT`. */
  authorization_error: string | null;
  /** The code in words, for people. */
  reason: string | null;
}

/** What the common verification codes mean for whoever looks at the report. */
const REASONS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: "the certificate is self-signed: no trusted authority vouches for it",
  SELF_SIGNED_CERT_IN_CHAIN: "the chain ends in a self-signed certificate that is not a trusted root",
  UNABLE_TO_GET_ISSUER_CERT: "the issuer's certificate cannot be found",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "the issuer is not a trusted authority, or the server does not send its intermediate certificates",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the certificate cannot be verified: the server does not send the intermediate certificates",
  CERT_HAS_EXPIRED: "the certificate has expired",
  CERT_NOT_YET_VALID: "the certificate is not valid yet",
  CERT_SIGNATURE_FAILURE: "the certificate's signature is invalid",
  ERR_TLS_CERT_ALTNAME_INVALID: "the certificate is not valid for this host name",
  CERT_UNTRUSTED: "the certificate is not trusted for server authentication",
};

const DAY_MS = 86_400_000;

/**
 * Summarises the certificate the server presented. The handshake ran with `rejectUnauthorized: false`
 * so an untrusted certificate can still be inspected; Node still verifies the chain and the host name
 * and reports the outcome as `authorized` / `authorizationError`, which become `trusted` and the reason.
 */
export function describeCertificate(
  cert: DetailedPeerCertificate,
  authorized: boolean,
  authorizationError: Error | string | null | undefined,
  now: Date,
): CertificateReport {
  const validTo = new Date(cert.valid_to);
  const code = authorized ? null : errorCode(authorizationError);
  return {
    subject: first(cert.subject?.CN) ?? first(cert.subject?.O),
    subject_alt_names: altNames(cert.subjectaltname),
    issuer: first(cert.issuer?.O) ?? first(cert.issuer?.CN),
    valid_from: new Date(cert.valid_from).toISOString(),
    valid_to: validTo.toISOString(),
    days_remaining: Math.floor((validTo.getTime() - now.getTime()) / DAY_MS),
    expired: validTo.getTime() < now.getTime(),
    fingerprint_sha256: cert.fingerprint256,
    serial_number: cert.serialNumber,
    trusted: authorized,
    authorization_error: code,
    reason: code === null ? null : (REASONS[code] ?? code),
  };
}

/** `authorizationError` is typed as an Error but Node sets a code string; accept both. */
function errorCode(error: Error | string | null | undefined): string {
  if (error === null || error === undefined) return "UNKNOWN";
  if (typeof error === "string") return error;
  return (error as NodeJS.ErrnoException).code ?? error.message;
}

/** Subject fields repeat as arrays when a certificate lists a name twice. */
function first(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** `DNS:example.com, IP Address:127.0.0.1` → `["example.com", "127.0.0.1"]`. */
function altNames(list: string | undefined): string[] {
  if (!list) return [];
  return list.split(/,\s*/).map((entry) => entry.replace(/^(DNS|IP Address|URI|email):/, ""));
}
