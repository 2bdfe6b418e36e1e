/**
 * `GET /v1/audio/voices` (free, docs/audio.md): the voices of every speech engine that can run here, as
 * an OpenAI-style list, filtered by `provider`, `language` (BCP 47: `en` matches `en-US`) and `gender`,
 * paged with `limit` (1-500, default 100) and `after` (the last id seen). Each voice carries the formats
 * its engine can answer in; its `id` is what `POST /v1/audio/speech` takes as `voice`.
 */
import { z } from "zod";
import { AppError, BadInputError } from "../../../common/errors.ts";
import type { FreeRoute } from "../../../merchant-kit/index.ts";
import type { AudioServices } from "./services.ts";
import { DEFAULT_VOICE_LIMIT, MAX_VOICE_LIMIT } from "./voices.ts";

export const VOICES_PATH = "/v1/audio/voices";

const Query = z.object({
  provider: z.string().min(1).max(64).optional(),
  language: z.string().min(1).max(64).optional(),
  gender: z.enum(["female", "male", "neutral"]).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_VOICE_LIMIT).default(DEFAULT_VOICE_LIMIT),
  after: z.string().min(1).max(256).optional(),
});

/** A refusal in OpenAI's error shape, the dialect of the merchant's other routes. */
function refusal(error: AppError): Response {
  const param = error instanceof BadInputError ? (error.param ?? null) : null;
  return Response.json(
    {
      error: {
        message: error.publicMessage ?? error.message,
        type: error.status >= 500 ? "server_error" : "invalid_request_error",
        param,
        code: error.code,
      },
    },
    { status: error.status, headers: error.headers },
  );
}

export function voicesRoute(audio: AudioServices): FreeRoute {
  return {
    method: "GET",
    path: VOICES_PATH,
    description: `The voices POST /v1/audio/speech can speak with (free): id, name, provider, languages (BCP 47), gender and formats, from every engine available here. Filters: provider, language, gender; pages: limit (1-${MAX_VOICE_LIMIT}, default ${DEFAULT_VOICE_LIMIT}) and after (the last id seen).`,
    example: {
      object: "list",
      data: [
        {
          id: "flite:slt",
          name: "slt",
          provider: "flite",
          languages: ["en-US", "en"],
          gender: "female",
          formats: ["mp3", "wav", "flac", "pcm"],
        },
      ],
      first_id: "flite:slt",
      last_id: "flite:slt",
      has_more: true,
    },
    errorDialect: "openai",
    errors: {
      400: "A filter or `limit` out of range (invalid_input, bad_request: `param` names it), or an `after` that is no voice id of this list.",
    },
    handler: async (request) => {
      const url = new URL(request.url);
      const parsed = Query.safeParse(Object.fromEntries(url.searchParams));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const param = issue?.path.join(".") || undefined;
        return refusal(
          new BadInputError(
            `${param ? `${param}: ` : ""}${issue?.message ?? "invalid query"}`,
            "invalid_input",
            param,
          ),
        );
      }
      try {
        const page = await audio.voices.list(parsed.data);
        const formats = new Map(audio.speechEngines.map((engine) => [engine.name, engine.formats]));
        return Response.json({
          object: "list",
          ...page,
          data: page.data.map((voice) => ({ ...voice, formats: formats.get(voice.provider) ?? [] })),
        });
      } catch (error) {
        if (error instanceof AppError) return refusal(error);
        throw error;
      }
    },
  };
}
