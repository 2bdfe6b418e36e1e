/**
 * The media upload as the caller (`/twitter/upload_media_v2`): twitterapi.io acts with the caller's cookies
 * through the operator's proxy, so without one it answers 501; the cookies go for that one call, never
 * kept or logged.
 */
import { AppError, UpstreamError } from "../../../../common/errors.ts";
import type { CallerSession, MediaFile, UploadedMedia } from "../../provider.ts";
import type { Json, TwitterApiClient } from "./client.ts";
import { idOf, invalid } from "./parse-user.ts";
import { unsupported } from "./unsupported.ts";

export async function uploadMedia(
  client: TwitterApiClient,
  proxy: string | undefined,
  session: CallerSession,
  file: MediaFile,
  signal: AbortSignal,
): Promise<UploadedMedia> {
  if (!proxy) {
    throw unsupported(
      "upload media as a caller: twitterapi.io's upload needs a proxy, and none is configured",
    );
  }
  const body = await client.postForm("/twitter/upload_media_v2", uploadForm(file, proxy, session), signal);
  if (!body) throw new UpstreamError("the social-data provider (twitterapi.io) has no media upload here");
  if (body.status === "error") throw uploadRefused(client.messageOf(body) ?? "");
  return parseUploaded(body, file);
}

export function uploadForm(file: MediaFile, proxy: string, session: CallerSession): FormData {
  const form = new FormData();
  form.set(
    "file",
    new Blob([new Uint8Array(file.bytes)], { type: file.type }),
    `upload.${file.type.split("/")[1] ?? "bin"}`,
  );
  form.set("proxy", proxy);
  form.set("login_cookies", loginCookies(session));
  return form;
}

/** An upload twitterapi.io answered with an error: the caller's 401 when it is about the session. */
export function uploadRefused(message: string): AppError {
  if (/cookie|login|session|auth|csrf|ct0|account/i.test(message)) {
    return new AppError(401, "invalid_session", "X did not accept the session's cookies for this upload");
  }
  return new UpstreamError("the social-data provider (twitterapi.io) could not upload the media");
}

export function parseUploaded(body: Json, file: MediaFile): UploadedMedia {
  const mediaId = idOf(body.media_id);
  if (!mediaId) throw invalid("an upload without a media id");
  return {
    mediaId,
    mediaKey: null,
    size: file.bytes.byteLength,
    expiresAfterSecs: null,
    image: { type: file.type, width: file.width, height: file.height },
  };
}

/**
 * The caller's cookies as twitterapi.io's `login_cookies`: the base64 of a JSON cookie dict (what their login
 * answers and their write endpoints decode), built for this one call and never kept.
 */
export function loginCookies(session: CallerSession): string {
  const cookies = { auth_token: session.authToken, ...(session.ct0 && { ct0: session.ct0 }) };
  return Buffer.from(JSON.stringify(cookies)).toString("base64");
}
