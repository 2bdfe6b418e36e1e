import { isIP } from "node:net";
import { FetchError } from "./fetch-errors.ts";

/** A URL that passed the checks that need no DNS. */
export interface Target {
  url: URL;
  /** Host without IPv6 brackets or a trailing dot, lower case (the WHATWG parser already folded it). */
  host: string;
  /** Set when the host is an IP literal: no lookup, this is the address. */
  literal: string | null;
}

/**
 * Ports the Fetch standard refuses (https://fetch.spec.whatwg.org/#bad-port): mail, SSH, IRC...
 * undici refuses them too; checking first gives the caller a clear `bad_url` instead of a generic
 * failure. Every other port is allowed: many real services listen on 8080, 8443 or 3000, and the
 * address check, not the port, is what keeps the fetch off internal services.
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * Names refused whatever they resolve to: cloud metadata services answer on them, and no public
 * page lives there. (Their addresses are refused too; the name check survives an allow-list that
 * opened link-local for a test.)
 */
const BLOCKED_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata", "instance-data"]);

/**
 * Parses and checks `input` (absolute, http or https, no credentials, no bad port). IP encodings
 * such as `0x7f.1`, `2130706433` or `127.1` need no special case: the WHATWG parser turns them
 * into dotted quads, which the address check then sees.
 */
export function parseTarget(input: string | URL, base?: URL): Target {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    throw new FetchError("bad_url", `not a valid URL: ${truncate(String(input))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchError("bad_url", `only http and https URLs can be fetched, not ${url.protocol}`);
  }
  // Credentials would be sent to whoever the host is, including after a redirect: refuse them.
  if (url.username !== "" || url.password !== "") {
    throw new FetchError("bad_url", "URLs with credentials (user:password@) are not fetched");
  }
  if (url.port !== "" && BAD_PORTS.has(Number(url.port))) {
    throw new FetchError("bad_url", `port ${url.port} is not fetched (a blocked port in the Fetch standard)`);
  }
  url.hash = "";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  if (host === "") throw new FetchError("bad_url", "the URL has no host");
  if (BLOCKED_NAMES.has(host)) {
    throw new FetchError("ssrf_blocked", `refusing to fetch ${host}: a cloud metadata host name`);
  }
  return { url, host, literal: isIP(host) ? host : null };
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
