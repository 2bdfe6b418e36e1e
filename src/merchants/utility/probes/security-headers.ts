/**
 * The response headers that harden a site in browsers, as sent (value) or missing (null). Reported, not
 * graded: whether a policy is good depends on the site. HEAD answers carry the same headers as GET ones
 * (RFC 9110 9.3.2), so one HEAD is enough to see them.
 */
export const SECURITY_HEADERS = {
  strict_transport_security: "strict-transport-security",
  content_security_policy: "content-security-policy",
  x_frame_options: "x-frame-options",
  x_content_type_options: "x-content-type-options",
  referrer_policy: "referrer-policy",
  permissions_policy: "permissions-policy",
  cross_origin_opener_policy: "cross-origin-opener-policy",
} as const;

export type SecurityHeaders = { [K in keyof typeof SECURITY_HEADERS]: string | null };

export function securityHeaders(headers: Readonly<Record<string, string>>): SecurityHeaders {
  const entries = Object.entries(SECURITY_HEADERS).map(([field, name]) => [field, headers[name] ?? null]);
  return Object.fromEntries(entries) as SecurityHeaders;
}
