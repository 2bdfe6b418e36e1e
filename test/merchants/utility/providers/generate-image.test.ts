/**
 * `/api/generate-image` against a fake OpenAI-compatible images API on 127.0.0.1: the request sent
 * (Bearer key, b64_json, size from the aspect ratio), base64 JSON or raw bytes with `?raw=1`, and the PNG
 * check refusing what is not one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateImageEndpoint } from "../../../../src/merchants/utility/providers/generate-image.ts";
import { openaiImageProvider } from "../../../../src/merchants/utility/providers/index.ts";
import { readPng } from "../../../../src/merchants/utility/providers/png.ts";
import { bodyOf } from "../../../helpers/upstreams/json.ts";
import { type FakeOpenAI, startOpenAIUpstream } from "../../../helpers/upstreams/openai.ts";
import { makePng } from "../../../helpers/upstreams/png.ts";
import { handlerContext } from "./context.ts";

let openai: FakeOpenAI;
beforeAll(async () => {
  openai = await startOpenAIUpstream("sk-img");
});
afterAll(() => openai?.close());

const endpoint = () =>
  generateImageEndpoint(openaiImageProvider({ url: openai.base, key: "sk-img", model: "gpt-image-test" }));
const generate = (input: object, url = "http://127.0.0.1/api/generate-image") =>
  endpoint().handler(endpoint().input.parse(input), handlerContext(url));

describe("POST /api/generate-image", () => {
  it("asks for b64_json at the aspect ratio's size and answers base64 PNG in JSON", async () => {
    openai.image = { kind: "png" };
    const answer = (await generate({ prompt: "a red square", aspect_ratio: "16:9" })) as Record<
      string,
      unknown
    >;
    const sent = openai.requests.at(-1);
    expect(sent?.url).toBe("/v1/images/generations");
    expect(sent?.headers.authorization).toBe("Bearer sk-img");
    expect(bodyOf(sent as never)).toEqual({
      model: "gpt-image-test",
      prompt: "a red square",
      n: 1,
      size: "1792x1024",
      response_format: "b64_json",
    });
    expect(answer).toMatchObject({
      mime_type: "image/png",
      width: 28,
      height: 16,
      revised_prompt: "a red square, detailed",
    });
    expect(readPng(Buffer.from(answer.image as string, "base64"))).toEqual({ width: 28, height: 16 });
  });

  it("answers the raw PNG with ?raw=1", async () => {
    const response = (await generate(
      { prompt: "x", size: "1024x1536" },
      "http://127.0.0.1/api/generate-image?raw=1",
    )) as Response;
    expect(response).toBeInstanceOf(Response);
    expect(response.headers.get("content-type")).toBe("image/png");
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(readPng(bytes)).toEqual({ width: 16, height: 24 });
  });

  it("refuses bytes that are not a PNG, and upstream errors, with a 502", async () => {
    openai.image = {
      kind: "bytes",
      bytes: Buffer.from("GIF89a not a png at all, sorry, padding padding padding"),
    };
    await expect(generate({ prompt: "x" })).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/not a PNG/),
    });
    const truncated = makePng(4, 4).subarray(0, 50);
    openai.image = { kind: "bytes", bytes: truncated };
    await expect(generate({ prompt: "x" })).rejects.toMatchObject({ status: 502 });
    openai.image = { kind: "status", status: 400 };
    await expect(generate({ prompt: "x" })).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/safety system/),
    });
    openai.image = { kind: "png" };
  });

  it("checks the input: prompt, aspect_ratio or size, not both", () => {
    const input = endpoint().input;
    expect(input.safeParse({ prompt: "" }).success).toBe(false);
    expect(input.safeParse({ prompt: "x", aspect_ratio: "5:4" }).success).toBe(false);
    expect(input.safeParse({ prompt: "x", size: "640x480" }).success).toBe(false);
    expect(input.safeParse({ prompt: "x", aspect_ratio: "1:1", size: "1024x1024" }).success).toBe(false);
  });

  it("answers 503 without an image provider", async () => {
    await expect(
      generateImageEndpoint(undefined).handler({ prompt: "x" }, handlerContext()),
    ).rejects.toMatchObject({
      status: 503,
      code: "provider_not_configured",
    });
  });
});

describe("the PNG check", () => {
  it("reads width and height of a real PNG and refuses other bytes", () => {
    expect(readPng(makePng(3, 5))).toEqual({ width: 3, height: 5 });
    expect(readPng(Buffer.from("\x89PNG\r\n\x1a\n", "latin1"))).toMatch(/not a PNG/);
    expect(readPng(Buffer.alloc(21 * 1024 * 1024))).toMatch(/larger than/);
  });
});
