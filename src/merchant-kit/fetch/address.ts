import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * IPv6 outside 2000::/3 is not global unicast: everything else IANA has assigned there is special
 * (loopback, unspecified, IPv4-compatible ::a.b.c.d, unique-local, link-local, multicast, NAT64...).
 * Refusing by "not global" rather than listing ranges also refuses what ipaddr.js files as `unicast`
 * only because it has no name for it, such as the deprecated IPv4-compatible ::/96.
 */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");

/**
 * ipaddr.js ranges inside 2000::/3 that embed an IPv4 address in a way we can decode: judge the
 * embedded address instead (a 6to4 gateway for 2002:7f00:1:: would deliver to 127.0.0.1's "site").
 */
const EMBEDS_V4_6TO4 = "6to4";

/**
 * Why `ip` must not be fetched, or `null` when it is an ordinary public unicast address.
 * Names are ipaddr.js range names (`loopback`, `private`, `linkLocal`, `carrierGradeNat`, `reserved`,
 * `uniqueLocal`, ...), so the message says which rule refused it. The only v4 range ipaddr.js calls
 * `unicast` is the public one: every other range it names (including documentation, benchmarking,
 * 240/4, AS112, AMT) is refused. Cloud metadata (169.254.169.254, fd00:ec2::254) falls in
 * linkLocal / uniqueLocal.
 */
export function blockedRange(ip: string): string | null {
  let address: Address;
  try {
    address = ipaddr.parse(canonical(ip));
  } catch {
    return "invalid";
  }
  return blockedRangeOf(address);
}

/**
 * ipaddr.js reads any `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`), but `::127.0.0.1` is the
 * IPv4-compatible `::7f00:1`, a different address. Let the WHATWG parser write a v6 address with a
 * dotted tail in its canonical hex form first, so each address is judged as what it is.
 */
function canonical(ip: string): string {
  if (!ip.includes(":") || !ip.includes(".")) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}

function blockedRangeOf(address: Address): string | null {
  if (address.kind() === "ipv4") {
    const range = address.range();
    return range === "unicast" ? null : range;
  }
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const inner = blockedRangeOf(embedded);
    return inner === null ? null : `${v6.range()}(${inner})`;
  }
  if (!v6.match(GLOBAL_UNICAST_V6)) return v6.range() === "unicast" ? "notGlobal" : v6.range();
  const range = v6.range();
  return range === "unicast" ? null : range;
}

/**
 * The IPv4 address an IPv6 address stands for, for the forms whose v4 is in the clear:
 * IPv4-mapped ::ffff:a.b.c.d, SIIT ::ffff:0:a.b.c.d (rfc6145), NAT64 64:ff9b::/96 and the
 * local-use 64:ff9b:1::/48 (rfc6052, last 32 bits), and 6to4 2002:AABB:CCDD::/48.
 * Teredo obfuscates its v4 and is refused as a range instead.
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const [, p1 = 0, p2 = 0, , , , p6 = 0, p7 = 0] = v6.parts;
  const range = v6.range();
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") return fromWords(p6, p7);
  if (range === EMBEDS_V4_6TO4) return fromWords(p1, p2);
  return null;
}

/** The IPv4 address in two 16-bit words. */
function fromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** Parses allow-list entries: single addresses ("127.0.0.1", "::1") or CIDRs ("10.0.0.0/8"). */
export function compileAllowList(entries: readonly string[]): (ip: string) => boolean {
  const ranges = entries.map((entry) => {
    try {
      return entry.includes("/") ? ipaddr.parseCIDR(entry) : singleAddress(entry);
    } catch {
      throw new TypeError(`fetch policy: allowAddresses entry ${JSON.stringify(entry)} is not an IP or CIDR`);
    }
  });
  return (ip) => {
    if (!ipaddr.isValid(ip)) return false;
    const address = ipaddr.parse(ip);
    return ranges.some(([base, bits]) => address.kind() === base.kind() && address.match(base, bits));
  };
}

function singleAddress(entry: string): [Address, number] {
  const address = ipaddr.parse(entry);
  return [address, address.kind() === "ipv4" ? 32 : 128];
}
