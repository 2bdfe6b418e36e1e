/**
 * `POST /tweets/mediaUpload` (docs/social.md): an image uploaded to X as the caller (multipart field `file`;
 * the caller's session cookies `auth_token` and `ct0` in the query, as the live service takes them, or
 * in the form), answering X's `media_id` to attach to a tweet. The image is checked before payment: its
 * type read from its own bytes (PNG, JPEG, GIF, WebP), agreeing with what the upload claims, at most X's
 * 5 MB (15 MB for a GIF). The cookies are used for this one call: never stored, logged or put in the
 * 402's resource URL.
 */
import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { precheckOf } from "../../merchant-kit/index.ts";
import { socialEndpoint } from "./endpoint.ts";
import { cookie } from "./params.ts";
import type { MediaFile } from "./provider.ts";
import type { SocialSetup, socialRuntime } from "./runtime.ts";
import { UploadAnswer } from "./schemas.ts";

const MB = 1024 * 1024;
/** X's limits on an image upload. */
export const IMAGE_LIMITS: Record<string, number> = {
  "image/png": 5 * MB,
  "image/jpeg": 5 * MB,
  "image/webp": 5 * MB,
  "image/gif": 15 * MB,
};
const FORMATS: Record<string, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** The upload read and checked: what it is from its bytes, its size within X's limit for that type. */
export async function readImage(file: File): Promise<MediaFile> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let format: string | undefined;
  let width = 0;
  let height = 0;
  try {
    // Loaded by the first upload: a host that never sees one (or the utility API beside it) never holds libvips.
    const { default: sharp } = await import("sharp");
    const meta = await sharp(bytes).metadata();
    format = meta.format;
    width = meta.width ?? 0;
    height = meta.height ?? 0;
  } catch {
    format = undefined;
  }
  const type = format ? FORMATS[format] : undefined;
  if (!type || width === 0 || height === 0)
    throw new BadInputError(
      "file must be an image: PNG, JPEG, GIF or WebP",
      "unsupported_media_type",
      "file",
    );
  const claimed = file.type.split(";")[0]?.trim().toLowerCase() ?? "";
  if (
    claimed !== "" &&
    claimed !== "application/octet-stream" &&
    claimed !== type &&
    !(claimed === "image/jpg" && type === "image/jpeg")
  )
    throw new BadInputError(`file is ${type} but was sent as ${claimed}`, "media_type_mismatch", "file");
  const limit = IMAGE_LIMITS[type] as number;
  if (bytes.byteLength > limit)
    throw new BadInputError(
      `a ${type} upload is at most ${limit / MB} MB; this one is ${bytes.byteLength} bytes`,
      "file_too_large",
      "file",
    );
  return { bytes, type, width, height };
}

export function mediaEndpoints(setup: SocialSetup, runtimeOf: ReturnType<typeof socialRuntime>) {
  const upload = socialEndpoint(setup, runtimeOf, {
    method: "POST",
    path: "/tweets/mediaUpload",
    price: "0.006",
    body: "multipart",
    writes: true,
    description:
      "Uploads an image (multipart field file: PNG, JPEG, GIF or WebP) to X as your account (query auth_token and ct0: your session's cookies, used for this call only) and answers the media_id to attach to a tweet.",
    input: z.object({
      file: z
        .file()
        .max(15 * MB, "at most 15 MB")
        .describe("The image: PNG, JPEG or WebP up to 5 MB, GIF up to 15 MB."),
      auth_token: cookie("auth_token", "auth_token"),
      ct0: cookie("ct0", "ct0"),
    }),
    output: UploadAnswer,
    secretParams: ["auth_token", "ct0"],
    maxBodyBytes: 15 * MB + 64 * 1024,
    errors: {
      400: "A file that is not a PNG, JPEG, GIF or WebP image, claims another type, or passes its type's size (unsupported_media_type, media_type_mismatch, file_too_large), before any payment is asked for.",
    },
    example: {
      input: {
        file: new File([new Uint8Array(8)], "chart.png", { type: "image/png" }),
        auth_token: "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2",
        ct0: "c0ffeec0ffeec0ffeec0ffeec0ffeec0",
      },
      output: {
        media_id: "1790000000000009000",
        media_id_string: "1790000000000009000",
        media_key: "3_1790000000000009000",
        size: 48213,
        expires_after_secs: 86400,
        image: { image_type: "image/png", w: 1200, h: 800 },
      },
    },
    precheck: precheckOf(({ file }) => readImage(file)),
    handler: async ({ file, auth_token, ct0 }, { provider }, ctx) => {
      const image = await readImage(file);
      const uploaded = await provider.uploadMedia({ authToken: auth_token, ct0 }, image, ctx.signal);
      return {
        media_id: uploaded.mediaId,
        media_id_string: uploaded.mediaId,
        media_key: uploaded.mediaKey,
        size: uploaded.size,
        expires_after_secs: uploaded.expiresAfterSecs,
        image: uploaded.image && {
          image_type: uploaded.image.type,
          w: uploaded.image.width,
          h: uploaded.image.height,
        },
      };
    },
  });
  return { upload };
}
