/**
 * `/api/vectorize` with the hosted engine: the Vectorizer.AI adapter against a fake of its API on 127.0.0.1
 * (multipart POST, HTTP Basic auth, the file back), `engine` choosing local or hosted, and the hosted
 * failures (an error answer, a file of the wrong kind, no answer in time) becoming 502/504.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type VectorizerProvider,
  vectorizeEndpoint,
  vectorizeEndpoints,
  vectorizerAiProvider,
} from "../../../../src/merchants/utility/vectorize/index.ts";
import { type FixtureServer, startFixtureServer } from "../../../helpers/fixtures/index.ts";
import { handlerContext } from "../providers/context.ts";
import { twoShapesAs } from "./images.ts";

interface Seen {
  authorization: string | undefined;
  fields: Record<string, string>;
  file: { name: string; type: string; bytes: Buffer } | null;
}

const HOSTED_SVG =
  '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="96" height="64" viewBox="0 0 96 64"><path fill="#DC1E1E" d="M8 8h32v48H8z"/><path fill="#1e3cdc" d="M56 16h32v32H56z"/></svg>';

let api: FixtureServer;
let seen: Seen[] = [];
/** What the fake answers next: a file of the asked format, an error, or a wrong file. */
let mode: "ok" | "error" | "wrong" | "slow" = "ok";

beforeAll(async () => {
  api = await startFixtureServer({
    routes: {
      "/api/v1/vectorize": async (request, res) => {
        const form = await new Request("http://fake/", {
          method: "POST",
          headers: { "content-type": String(request.headers["content-type"]) },
          body: new Uint8Array(request.body),
        }).formData();
        const fields: Record<string, string> = {};
        let file: Seen["file"] = null;
        for (const [key, value] of form.entries()) {
          if (typeof value === "string") fields[key] = value;
          else file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
        }
        seen.push({ authorization: request.headers.authorization, fields, file });
        if (request.headers.authorization !== `Basic ${Buffer.from("id-1:secret-1").toString("base64")}`) {
          res.writeHead(401, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { status: 401, code: 1003, message: "Invalid API credentials" } }));
          return;
        }
        if (mode === "error") {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              error: { status: 400, code: 1006, message: "Failed to read the supplied image." },
            }),
          );
          return;
        }
        if (mode === "slow") {
          setTimeout(() => res.writeHead(200, { "content-type": "image/svg+xml" }).end(HOSTED_SVG), 1500);
          return;
        }
        const format = fields["output.file_format"];
        const body =
          mode === "wrong"
            ? "<html>maintenance</html>"
            : format === "svg"
              ? HOSTED_SVG
              : format === "pdf"
                ? "%PDF-1.4\n% fake\n%%EOF\n"
                : format === "eps"
                  ? "%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 96 64\n%%EOF\n"
                  : "0\nSECTION\n2\nENTITIES\n0\nENDSEC\n0\nEOF\n";
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
      },
    },
  });
});
afterAll(() => api?.close());

const provider = (secret = "secret-1", timeoutMs?: number): VectorizerProvider =>
  vectorizerAiProvider({
    apiId: "id-1",
    apiSecret: secret,
    url: `${api.url}api/v1/vectorize`,
    mode: "test",
    ...(timeoutMs !== undefined && { timeoutMs }),
  });
const run = async (input: object, hosted = provider()) => {
  const endpoint = vectorizeEndpoint({ hosted });
  return (await endpoint.handler(endpoint.input.parse(input), handlerContext())) as Record<string, unknown>;
};

describe("POST /api/vectorize, hosted engine (Vectorizer.AI wire format)", () => {
  it("sends the image as multipart with Basic auth, mode, format and colours; answers the SVG", async () => {
    seen = [];
    mode = "ok";
    const png = await twoShapesAs("png");
    const answer = await run({ image_base64: png.toString("base64"), colors: 8 });
    expect(seen).toHaveLength(1);
    const request = seen[0] as Seen;
    expect(request.fields).toEqual({
      mode: "test",
      "output.file_format": "svg",
      "processing.max_colors": "8",
    });
    expect(request.file?.type).toBe("image/png");
    expect(request.file?.bytes.equals(png)).toBe(true);
    expect(answer).toMatchObject({
      engine: "vectorizer.ai",
      format: "svg",
      width: 96,
      height: 64,
      paths: 2,
      colors: ["#dc1e1e", "#1e3cdc"],
      input_format: "png",
      svg: HOSTED_SVG,
    });
  });

  it.each([
    ["pdf", "application/pdf", "%PDF-"],
    ["eps", "application/postscript", "%!PS-Adobe"],
    ["dxf", "image/vnd.dxf", "0\nSECTION"],
  ])("answers %s in base64 with null paths and colours", async (format, mime, head) => {
    mode = "ok";
    const answer = await run({ image_base64: (await twoShapesAs("jpeg")).toString("base64"), format });
    expect(answer).toMatchObject({
      format,
      mime_type: mime,
      paths: null,
      colors: null,
      input_format: "jpeg",
    });
    expect(
      Buffer.from(answer.data_base64 as string, "base64")
        .toString("latin1")
        .startsWith(head),
    ).toBe(true);
    expect(seen.at(-1)?.file?.type).toBe("image/jpeg");
  });

  it("uses the local engine when asked, even when hosted is configured", async () => {
    seen = [];
    const answer = await run({
      image_base64: (await twoShapesAs("png")).toString("base64"),
      engine: "local",
    });
    expect(answer.engine).toBe("local");
    expect(seen).toHaveLength(0);
  });

  it("does not send what is not an image", async () => {
    seen = [];
    await expect(run({ image_base64: Buffer.from("hello").toString("base64") })).rejects.toMatchObject({
      status: 400,
      code: "unsupported_image",
    });
    expect(seen).toHaveLength(0);
  });

  it("turns hosted failures into 502/504 with the provider's message, never its key", async () => {
    const png = (await twoShapesAs("png")).toString("base64");
    mode = "error";
    await expect(run({ image_base64: png })).rejects.toMatchObject({
      status: 502,
      code: "upstream_failed",
      message: expect.stringContaining("Failed to read the supplied image."),
    });
    mode = "ok";
    const denied = await run({ image_base64: png }, provider("wrong")).catch((e: { message: string }) => e);
    expect(denied).toMatchObject({ status: 502, message: expect.stringContaining("401") });
    expect((denied as { message: string }).message).not.toContain("wrong");
    mode = "wrong";
    await expect(run({ image_base64: png })).rejects.toMatchObject({ status: 502, code: "upstream_invalid" });
    mode = "slow";
    await expect(run({ image_base64: png }, provider("secret-1", 300))).rejects.toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
    mode = "ok";
  });

  it("builds the adapter from settings in vectorizeEndpoints", async () => {
    seen = [];
    const [endpoint] = vectorizeEndpoints({
      hostedSettings: { apiId: "id-1", apiSecret: "secret-1", url: `${api.url}api/v1/vectorize` },
    });
    const png = (await twoShapesAs("png")).toString("base64");
    const answer = await endpoint?.handler(endpoint.input.parse({ image_base64: png }), handlerContext());
    expect(answer).toMatchObject({ engine: "vectorizer.ai" });
    expect(seen[0]?.fields.mode).toBe("production");
  });
});
