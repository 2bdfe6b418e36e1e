/**
 * `POST /api/translate-text`: the language provider translates under a strict JSON contract
 * (`{"source_language", "translation"}` and nothing else), and the answer is verified before it is sold:
 * the JSON must parse with exactly those string fields, and the layout must match (`translate-check.ts`).
 * A failed check is retried once with the difference named; a second failure is a 502, not charged.
 */
import { z } from "zod";
import { BadInputError, UpstreamError } from "../../../common/errors.ts";
import type { ChatMessage, LanguageProvider } from "../../../merchant-kit/index.ts";
import { defineEndpoint, notConfigured, providerErrors } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { LANGUAGE_SETTINGS } from "./messages.ts";
import { layoutDifference } from "./translate-check.ts";
import { type Language, resolveLanguage } from "./translate-language.ts";

/** Spec 7 and 8: text per call. */
export const MAX_TRANSLATE_CHARACTERS = 8_000;

const TranslateInput = z.object({
  text: z
    .string()
    .min(1)
    .max(MAX_TRANSLATE_CHARACTERS, `text is at most ${MAX_TRANSLATE_CHARACTERS} characters`)
    .refine((t) => t.trim() !== "", "text must not be blank")
    .describe(`The text, at most ${MAX_TRANSLATE_CHARACTERS} characters; line breaks and Markdown are kept.`),
  target: z
    .string()
    .min(1)
    .max(60)
    .refine((t) => resolveLanguage(t) !== null, "not a language code or name we know")
    .describe("Target language: ISO 639 code or BCP 47 tag (`fr`, `pt-BR`, `zh-Hant`) or a name (`French`)."),
});

const TranslateOutput = z.object({
  translation: z.string(),
  source_language: z
    .string()
    .describe("Detected language of the text, BCP 47 (`und` when the model could not tell)."),
  target_language: z.string().describe("The target as a canonical BCP 47 tag."),
  target_language_name: z.string(),
});

const Contract = z.strictObject({ source_language: z.string(), translation: z.string() });

function instructions(target: Language): string {
  return [
    `You are a translation engine. Translate the user's text into ${target.name} (${target.code}).`,
    "Keep the layout exactly: the same number of lines, blank lines where they are, the same indentation, and every Markdown marker (headings, list bullets and numbers, blockquotes, tables, **bold**, `code`, links: translate link text, never URLs). Do not translate code blocks or inline code. Do not add or drop anything.",
    'Answer with one JSON object and nothing else: {"source_language": "<ISO 639-1 code of the text\'s language>", "translation": "<the translated text>"}.',
  ].join("\n");
}

/** The object inside the reply (models sometimes wrap it in a code fence), checked against the contract. */
function readContract(reply: string): z.output<typeof Contract> | string {
  const start = reply.indexOf("{");
  const end = reply.lastIndexOf("}");
  if (start < 0 || end < start) return "the reply was not a JSON object";
  try {
    const parsed = Contract.safeParse(JSON.parse(reply.slice(start, end + 1)));
    return parsed.success ? parsed.data : "the JSON object must have exactly source_language and translation";
  } catch {
    return "the reply was not valid JSON";
  }
}

export function translateEndpoint(language: LanguageProvider | undefined) {
  return defineEndpoint({
    method: "POST",
    path: "/api/translate-text",
    price: PRICES["/api/translate-text"],
    effects: ["upstream"],
    description: `Translates text (at most ${MAX_TRANSLATE_CHARACTERS} characters) into a target language (name or ISO code) and detects the source language; line breaks and Markdown are preserved and checked.`,
    input: TranslateInput,
    output: TranslateOutput,
    example: {
      input: { text: "# Hello\n\n- **fast** delivery", target: "fr" },
      output: {
        translation: "# Bonjour\n\n- livraison **rapide**",
        source_language: "en",
        target_language: "fr",
        target_language_name: "French",
      },
    },
    timeoutMs: 90_000,
    errors: {
      400: "A `target` that is no language code or name known here (invalid_language), found once the payment is verified.",
      ...providerErrors("language provider", language !== undefined, LANGUAGE_SETTINGS),
    },
    handler: async (input, ctx) => {
      const target = resolveLanguage(input.target);
      if (!target)
        throw new BadInputError(
          `"${input.target}" is not a language code or name we know`,
          "invalid_language",
        );
      if (!language) throw notConfigured("language provider", LANGUAGE_SETTINGS);
      // Compared and answered in \n; a CRLF text gets its CRLFs back.
      const crlf = input.text.includes("\r\n");
      const text = input.text.replace(/\r\n/g, "\n");
      const messages: ChatMessage[] = [{ role: "user", content: text }];
      let problem = "";
      for (let attempt = 0; attempt < 2; attempt++) {
        const reply = await language.complete(
          {
            system: instructions(target),
            messages,
            maxTokens: Math.min(8192, text.length * 2 + 256),
            temperature: 0,
          },
          ctx.signal,
        );
        if (reply.stopReason === "max_tokens")
          throw new UpstreamError("the translation was cut off", "upstream_truncated");
        const result = readContract(reply.text);
        problem = typeof result === "string" ? result : (layoutDifference(text, result.translation) ?? "");
        if (typeof result !== "string" && !problem) {
          return {
            translation: crlf ? result.translation.replace(/\n/g, "\r\n") : result.translation,
            source_language: resolveLanguage(result.source_language)?.code ?? "und",
            target_language: target.code,
            target_language_name: target.name,
          };
        }
        messages.push(
          { role: "assistant", content: reply.text },
          {
            role: "user",
            content: `That answer is not usable: ${problem}. Answer again with the JSON object only.`,
          },
        );
      }
      throw new UpstreamError(
        `the translation failed its layout check: ${problem}`,
        "translation_unverified",
      );
    },
  });
}
