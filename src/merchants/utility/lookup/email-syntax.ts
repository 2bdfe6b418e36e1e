import { type DomainName, parseDomain } from "./domain-name.ts";

export interface EmailSyntax {
  valid: boolean;
  /** Why not, when not valid. */
  reason: string | null;
  local_part: string | null;
  domain: string | null;
  /** The local part is a quoted string (`"john doe"@example.com`): valid, but many systems reject it. */
  quoted: boolean;
}

/** RFC 5321 4.5.3.1: 64 octets of local part; 254 for a whole address (RFC 3696 erratum 1690). */
export const MAX_LOCAL_PART = 64;
export const MAX_ADDRESS = 254;

/** RFC 5322 3.2.3 atext, joined by single dots (dot-atom). */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** RFC 5321 4.1.2 Quoted-string: qtextSMTP (%d32-33, %d35-91, %d93-126) or a quoted pair (\ %d32-126). */
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;

/**
 * A practical RFC 5321/5322 check of an address as used in SMTP's MAIL/RCPT (a "Mailbox"), not the
 * header grammar: no display names, comments, folding white space or obsolete forms. The local part is a
 * dot-atom or a quoted string, ASCII only (SMTPUTF8 local parts are refused: most mail systems do not
 * accept them); the domain is a public host name (domain-name.ts; IDNs allowed). Address literals
 * (`user@[192.0.2.1]`) are valid SMTP but refused: they bypass DNS and are not mail identities.
 */
export function checkSyntax(input: string): EmailSyntax & { parsed: DomainName | null } {
  const invalid = (reason: string) => ({
    valid: false,
    reason,
    local_part: null,
    domain: null,
    quoted: false,
    parsed: null,
  });
  const address = input.trim();
  const at = address.lastIndexOf("@");
  if (at < 0) return invalid("no @ sign");
  const local = address.slice(0, at);
  const domainPart = address.slice(at + 1);
  if (local === "") return invalid("empty local part");
  if (domainPart === "") return invalid("empty domain");
  if (Buffer.byteLength(address) > MAX_ADDRESS) return invalid(`longer than ${MAX_ADDRESS} characters`);
  if (Buffer.byteLength(local) > MAX_LOCAL_PART)
    return invalid(`local part longer than ${MAX_LOCAL_PART} octets`);
  const quoted = local.startsWith('"');
  if (quoted ? !QUOTED.test(local) : !DOT_ATOM.test(local)) {
    return invalid(
      /[^\p{ASCII}]/u.test(local)
        ? "non-ASCII local part (SMTPUTF8) is not accepted"
        : "local part has characters or dots not allowed unquoted",
    );
  }
  if (domainPart.startsWith("[")) return invalid("address literals ([ip]) are not accepted");
  try {
    const parsed = parseDomain(domainPart);
    if (domainPart.endsWith(".")) return invalid("the domain ends with a dot");
    return { valid: true, reason: null, local_part: local, domain: parsed.hostname, quoted, parsed };
  } catch (error) {
    return invalid((error as Error).message);
  }
}
