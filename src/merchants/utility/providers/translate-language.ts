/**
 * Reads the `target` of `/api/translate-text`: an ISO 639 code or BCP 47 tag (`fr`, `pt-BR`, `zh-Hant`)
 * or a language name in English or in the language itself (`French`, `français`, `Brazilian Portuguese`).
 * Names and validity come from ICU through `Intl.DisplayNames`, so there is no hand-kept language list:
 * a code is valid when ICU has a name for its language subtag.
 */

export interface Language {
  /** Canonical BCP 47 tag, e.g. "fr", "pt-BR", "zh-Hant". */
  code: string;
  /** English name, e.g. "French", "Brazilian Portuguese". */
  name: string;
}

const english = new Intl.DisplayNames(["en"], { type: "language", fallback: "none" });

/** Three-letter languages ICU names that have no two-letter code, worth finding by name. */
const EXTRA_CODES = ["fil", "haw", "yue", "ceb", "hmn", "ckb", "kok", "mni", "sat", "chr", "ast", "gsw"];
/** Regional variants people ask for by name. */
const VARIANTS = ["pt-BR", "pt-PT", "zh-Hans", "zh-Hant", "en-US", "en-GB", "es-MX", "es-419", "fr-CA"];

let byName: Map<string, string> | undefined;

/** Lower-case name (English or native) → code, built once from every two-letter code ICU names. */
function namesIndex(): Map<string, string> {
  if (byName) return byName;
  byName = new Map();
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const codes = [...letters].flatMap((a) => [...letters].map((b) => a + b));
  for (const code of [...codes, ...EXTRA_CODES, ...VARIANTS]) {
    const name = english.of(code);
    if (!name || name === code) continue;
    if (!byName.has(name.toLowerCase())) byName.set(name.toLowerCase(), code);
    try {
      const native = new Intl.DisplayNames([code], { type: "language", fallback: "none" }).of(code);
      if (native && !byName.has(native.toLowerCase())) byName.set(native.toLowerCase(), code);
    } catch {
      // ICU has no locale data for this language: its English name is enough.
    }
  }
  return byName;
}

/** The language a code or name means, or null when it names none. */
export function resolveLanguage(input: string): Language | null {
  const text = input.trim();
  if (!text || text.length > 60) return null;
  if (/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/.test(text)) {
    try {
      const [code] = Intl.getCanonicalLocales(text.replaceAll("_", "-"));
      const primary = code?.split("-")[0];
      if (code && primary && english.of(primary))
        return { code, name: english.of(code) ?? (english.of(primary) as string) };
    } catch {
      // Not a well-formed tag: try it as a name.
    }
  }
  const code = namesIndex().get(text.toLowerCase());
  return code ? { code, name: english.of(code) as string } : null;
}
