import { createRequire } from "node:module";

interface Lists {
  exact: ReadonlySet<string>;
  wildcard: ReadonlySet<string>;
}
let lists: Lists | undefined;

/**
 * disposable-email-domains 1.0.62: 121,570 exact domains (2.4 MB of JSON, ~45 ms to parse) and a short list
 * of domains all of whose subdomains are disposable. Loaded on first use so processes that never verify an
 * address do not pay for it.
 */
function load(): Lists {
  if (lists) return lists;
  const require = createRequire(import.meta.url);
  lists = {
    exact: new Set(require("disposable-email-domains") as string[]),
    wildcard: new Set(require("disposable-email-domains/wildcard.json") as string[]),
  };
  return lists;
}

/** Whether mail for `domain` (lower-case ASCII) goes to a throw-away inbox service, or a subdomain of one. */
export function isDisposableDomain(domain: string): boolean {
  const { exact, wildcard } = load();
  if (exact.has(domain)) return true;
  const labels = domain.split(".");
  for (let i = 1; i < labels.length - 1; i++) {
    const parent = labels.slice(i).join(".");
    if (wildcard.has(parent) || exact.has(parent)) return true;
  }
  return false;
}
