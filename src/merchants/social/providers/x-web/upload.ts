/**
 * The media upload as the caller (`upload.x.com/i/media/upload.json`): INIT with the file's size and type,
 * one APPEND of the bytes, FINALIZE; the answers read into `UploadedMedia`.
 */
import { UpstreamError } from "../../../../common/errors.ts";
import type { CallerSession, MediaFile, UploadedMedia } from "../../provider.ts";
import { PROVIDER, type XWebClient } from "./client.ts";
import { type Json, num, obj, str } from "./json.ts";

export async function uploadMedia(
  client: XWebClient,
  session: CallerSession,
  file: MediaFile,
  signal: AbortSignal,
): Promise<UploadedMedia> {
  const init = obj(await client.upload(initQuery(file), undefined, signal, session));
  const mediaId = mediaIdOf(init);
  const form = new FormData();
  form.set("media", new Blob([new Uint8Array(file.bytes)], { type: file.type }), "blob");
  await client.upload({ command: "APPEND", media_id: mediaId, segment_index: "0" }, form, signal, session);
  const done = obj(
    await client.upload({ command: "FINALIZE", media_id: mediaId }, undefined, signal, session),
  );
  return parseUploaded(done, init, mediaId, file);
}

export const initQuery = (file: MediaFile): Record<string, string> => ({
  command: "INIT",
  total_bytes: String(file.bytes.byteLength),
  media_type: file.type,
  media_category: file.type === "image/gif" ? "tweet_gif" : "tweet_image",
});

/** The media id INIT answered. */
export function mediaIdOf(init: Json | undefined): string {
  const mediaId = str(init?.media_id_string);
  if (!mediaId || !/^\d+$/.test(mediaId))
    throw new UpstreamError(
      `the ${PROVIDER} answered the upload's INIT without a media id`,
      "upstream_invalid",
    );
  return mediaId;
}

/** FINALIZE's answer, what it leaves out taken from INIT's and from the file. */
export function parseUploaded(
  done: Json | undefined,
  init: Json | undefined,
  mediaId: string,
  file: MediaFile,
): UploadedMedia {
  if (!done || (str(done.media_id_string) ?? mediaId) !== mediaId)
    throw new UpstreamError(
      `the ${PROVIDER} answered the upload's FINALIZE with something unexpected`,
      "upstream_invalid",
    );
  const image = obj(done.image);
  const expires = done.expires_after_secs ?? init?.expires_after_secs;
  return {
    mediaId,
    mediaKey: str(done.media_key) ?? null,
    size: typeof done.size === "number" ? done.size : file.bytes.byteLength,
    expiresAfterSecs: typeof expires === "number" ? expires : null,
    image: image
      ? {
          type: str(image.image_type) ?? file.type,
          width: num(image.w) || file.width,
          height: num(image.h) || file.height,
        }
      : null,
  };
}
