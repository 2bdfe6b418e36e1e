/**
 * `/api/translate-text`: target languages read through Intl.DisplayNames, the layout check, and the
 * endpoint against a fake OpenAI-compatible upstream: the JSON contract, one retry, 502 when the layout
 * is still wrong, the 8,000-character limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { languageProvider } from "../../../../src/merchants/utility/providers/index.ts";
import { translateEndpoint } from "../../../../src/merchants/utility/providers/translate.ts";
import { layoutDifference } from "../../../../src/merchants/utility/providers/translate-check.ts";
import { resolveLanguage } from "../../../../src/merchants/utility/providers/translate-language.ts";
import { bodyOf } from "../../../helpers/upstreams/json.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../../helpers/upstreams/openai.ts";
import { handlerContext } from "./context.ts";

let openai: FakeOpenAI;
beforeAll(async () => {
  openai = await startOpenAIUpstream("sk-test");
});
afterAll(() => openai?.close());

const endpoint = () =>
  translateEndpoint(
    languageProvider({ dialect: "openai", url: openai.base, key: "sk-test", model: "gpt-test-mini" }),
  );
const translate = (text: string, target: string) =>
  endpoint().handler(endpoint().input.parse({ text, target }), handlerContext());

const SOURCE = "# Hello\n\nThis is **important**.\n\n- one `item`\n- [a link](https://example.com)\n1. first";
const GOOD =
  "# Bonjour\n\nCeci est **important**.\n\n- un `élément`\n- [un lien](https://example.com)\n1. premier";

describe("target languages", () => {
  it.each([
    ["fr", "fr", "French"],
    ["FR", "fr", "French"],
    ["pt_br", "pt-BR", "Brazilian Portuguese"],
    ["zh-hant", "zh-Hant", "Traditional Chinese"],
    ["French", "fr", "French"],
    ["japanese", "ja", "Japanese"],
    ["Deutsch", "de", "German"],
    ["Brazilian Portuguese", "pt-BR", "Brazilian Portuguese"],
    ["fil", "fil", "Filipino"],
  ])("reads %s as %s", (input, code, name) => {
    expect(resolveLanguage(input)).toEqual({ code, name });
  });
  it.each(["xx", "Klingonese", "", "12", "en-"])("refuses %j", (input) => {
    expect(resolveLanguage(input)).toBeNull();
  });
});

describe("the layout check", () => {
  it("accepts a translation that keeps lines and markers", () => {
    expect(layoutDifference(SOURCE, GOOD)).toBeNull();
  });
  it.each([
    ["merged lines", GOOD.replace("\n\nCeci", " Ceci")],
    ["a dropped bullet", GOOD.replace("- un", "un")],
    ["a heading level", GOOD.replace("# Bonjour", "## Bonjour")],
    ["lost bold", GOOD.replace("**important**", "important")],
    ["lost code", GOOD.replace("`élément`", "élément")],
    ["a changed indent", GOOD.replace("- un", "  - un")],
  ])("refuses %s", (_, translation) => {
    expect(layoutDifference(SOURCE, translation)).toBeTypeOf("string");
  });
});

describe("POST /api/translate-text", () => {
  it("translates under the JSON contract and keeps CRLF line ends", async () => {
    openai.behaviour = {
      kind: "reply",
      text: () => `\`\`\`json\n${JSON.stringify({ source_language: "en", translation: GOOD })}\n\`\`\``,
    };
    const answer = await translate(SOURCE.replace(/\n/g, "\r\n"), "French");
    expect(answer).toEqual({
      translation: GOOD.replace(/\n/g, "\r\n"),
      source_language: "en",
      target_language: "fr",
      target_language_name: "French",
    });
    const sent = bodyOf(openai.requests.at(-1) as never);
    expect(sent.messages[0].role).toBe("system");
    expect(sent.messages[0].content).toContain("into French (fr)");
    expect(sent.messages[1]).toEqual({ role: "user", content: SOURCE });
    expect(sent.temperature).toBe(0);
  });

  it("retries once when the layout is lost, naming the difference", async () => {
    let calls = 0;
    openai.behaviour = {
      kind: "reply",
      text: () =>
        JSON.stringify({
          source_language: "en",
          translation: calls++ === 0 ? GOOD.replaceAll("\n\n", "\n") : GOOD,
        }),
    };
    const answer = await translate(SOURCE, "fr");
    expect(answer).toMatchObject({ translation: GOOD });
    const retry = bodyOf(openai.requests.at(-1) as never).messages;
    expect(retry).toHaveLength(4);
    expect(retry[3].content).toMatch(/the text has 7 lines, the translation 5/);
  });

  it("is a 502 when the answer breaks the contract twice", async () => {
    openai.behaviour = { kind: "reply", text: () => "Bonjour !" };
    await expect(translate("Hello!", "fr")).rejects.toMatchObject({
      status: 502,
      code: "translation_unverified",
    });
    openai.behaviour = {
      kind: "reply",
      text: () => JSON.stringify({ translation: "Bonjour", source_language: "en", note: "x" }),
    };
    await expect(translate("Hello", "fr")).rejects.toMatchObject({ status: 502 });
  });

  it("refuses text over 8,000 characters and unknown languages before anything is asked", () => {
    expect(endpoint().input.safeParse({ text: "a".repeat(8001), target: "fr" }).success).toBe(false);
    expect(endpoint().input.safeParse({ text: "a".repeat(8000), target: "fr" }).success).toBe(true);
    expect(endpoint().input.safeParse({ text: "hello", target: "Elvish" }).success).toBe(false);
    expect(endpoint().input.safeParse({ text: "   ", target: "fr" }).success).toBe(false);
  });

  it("answers 503 without a language provider", async () => {
    await expect(
      translateEndpoint(undefined).handler({ text: "hi", target: "fr" }, handlerContext()),
    ).rejects.toMatchObject({
      status: 503,
      code: "provider_not_configured",
    });
  });
});
