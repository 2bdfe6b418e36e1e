import { createRequire } from "node:module";
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import type { parse as parseHostname } from "tldts";
import { BadInputError } from "../../../common/errors.ts";
import { onFirstUse } from "../lazy.ts";

/** The Public Suffix List (tldts), loaded by the first name checked; its `main` is CommonJS to a static import too. */
const tldts = onFirstUse(() => createRequire(import.meta.url)("tldts") as { parse: typeof parseHostname });

export interface DomainName {
  /** The name to query, lower-case ASCII (IDNs in their xn-- form), no trailing dot. */
  hostname: string;
  /** The registrable ("organizational") domain under its ICANN public suffix, e.g. `example.co.uk`. */
  registrable: string;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_NAME_LENGTH = 253;

/**
 * A host name worth asking public DNS about: letters-digits-hyphen labels of 1-63 characters, at most 253
 * in all, under a public suffix of the ICANN section of the Public Suffix List (tldts). That refuses IP
 * addresses, single labels (`localhost`), bare suffixes (`co.uk`) and names under private-use or
 * special-use TLDs (`.internal`, `.local`, `.test`, `.invalid`): those are never public, and if the
 * resolver is an internal one they would read the operator's private zones.
 * Unicode names are converted with IDNA (`bücher.de` → `xn--bcher-kva.de`).
 */
export function parseDomain(input: string): DomainName {
  let name = input.trim().toLowerCase();
  if (name.endsWith(".")) name = name.slice(0, -1);
  if (name === "") throw new BadInputError("the domain is empty", "invalid_domain");
  if (isIP(name) !== 0 || isIP(name.replace(/^\[|\]$/g, "")) !== 0) {
    throw new BadInputError(`${name} is an IP address, not a domain name`, "invalid_domain");
  }
  const ascii = /^[\x21-\x7e]*$/.test(name) ? name : domainToASCII(name);
  if (ascii === "") throw new BadInputError(`"${clip(name)}" is not a valid domain name`, "invalid_domain");
  if (ascii.length > MAX_NAME_LENGTH) {
    throw new BadInputError(`a domain name has at most ${MAX_NAME_LENGTH} characters`, "invalid_domain");
  }
  const labels = ascii.split(".");
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    throw new BadInputError(
      `"${clip(bad)}" is not a valid label: 1-63 letters, digits or inner hyphens`,
      "invalid_domain",
    );
  }
  if (labels.length < 2) {
    throw new BadInputError(`"${ascii}" is a single label, not a public domain name`, "invalid_domain");
  }
  const parsed = tldts().parse(ascii);
  if (parsed.isIcann !== true || !parsed.domain) {
    throw new BadInputError(
      `"${ascii}" is not under a public ICANN suffix (or is a suffix itself)`,
      "invalid_domain",
    );
  }
  return { hostname: ascii, registrable: parsed.domain };
}

function clip(text: string): string {
  return text.length > 70 ? `${text.slice(0, 70)}...` : text;
}
