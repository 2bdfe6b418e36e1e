/**
 * The voice catalogue (`GET /v1/audio/voices`) over every speech engine that can run here, and the way
 * back from a voice id to the engine that speaks it (`POST /v1/audio/speech`'s `voice`).
 *
 * Order: engines in the order the catalogue was given them, each engine's voices sorted by id, so a page
 * boundary never moves while nothing is installed or removed.
 *
 * Pagination follows OpenAI's list endpoints (files, assistants, vector stores): `limit` (default 100,
 * at most 500) and an `after` cursor, the id of the last voice of the previous page; the page answers
 * `first_id`, `last_id` and `has_more`. A cursor rather than an offset because the list can change
 * between two requests (an engine installed, an upstream adding voices): the next page then still starts
 * right after the voice the client last saw, where an offset would skip or repeat voices. A cursor whose
 * voice has since gone still works: its place in the order is known from its id.
 *
 * Stock OpenAI clients name OpenAI's voices (`alloy`, `nova`...). With an upstream configured, it speaks
 * them (OpenAI-compatible servers take OpenAI's names); otherwise `OPENAI_VOICE_MAP` names the offline
 * voice that does (see its comment). A bare name the upstream lists (`af_bella`) goes to it too.
 */
import { type AppError, BadInputError } from "../../../common/errors.ts";
import type { SpeechEngine, Voice } from "./engine.ts";
import { engineUnavailable } from "./engine-call.ts";

export const DEFAULT_VOICE_LIMIT = 100;
export const MAX_VOICE_LIMIT = 500;

/** OpenAI's voice names (its text-to-speech guide lists these 13; `tts-1` speaks the first nine of them). */
export const OPENAI_VOICES = [
  "alloy",
  "ash",
  "coral",
  "echo",
  "fable",
  "nova",
  "onyx",
  "sage",
  "shimmer",
  "ballad",
  "verse",
  "marin",
  "cedar",
] as const;

/**
 * The offline voice each OpenAI name stands for when no upstream speaks it, first installed one wins.
 * OpenAI publishes no genders; the names commonly heard as women's voices (coral, marin, nova, sage,
 * shimmer) and `alloy` (the default of most clients: it should be the clearest voice) go to flite's only
 * female voice, slt; `fable`, heard as British, to awb (a Scottish speaker); the deep `onyx` and the rest
 * spread over flite's male voices so that names a client tells apart stay apart. Without flite, every name
 * is espeak-ng's American English.
 */
export const OPENAI_VOICE_MAP: Readonly<Record<(typeof OPENAI_VOICES)[number], readonly string[]>> = {
  alloy: ["flite:slt", "espeak-ng:en-us"],
  ash: ["flite:awb", "espeak-ng:en-us"],
  ballad: ["flite:awb", "espeak-ng:en-us"],
  cedar: ["flite:rms", "espeak-ng:en-us"],
  coral: ["flite:slt", "espeak-ng:en-us"],
  echo: ["flite:rms", "espeak-ng:en-us"],
  fable: ["flite:awb", "espeak-ng:en-us"],
  marin: ["flite:slt", "espeak-ng:en-us"],
  nova: ["flite:slt", "espeak-ng:en-us"],
  onyx: ["flite:rms", "espeak-ng:en-us"],
  sage: ["flite:slt", "espeak-ng:en-us"],
  shimmer: ["flite:slt", "espeak-ng:en-us"],
  verse: ["flite:kal16", "espeak-ng:en-us"],
};

export interface VoiceQuery {
  /** An engine family: `flite`, `espeak-ng`, `upstream` (case-insensitive). */
  provider?: string;
  /** A BCP 47 tag; `en` matches `en`, `en-US`, `en-GB-x-rp` (case-insensitive, whole subtags). */
  language?: string;
  gender?: "female" | "male" | "neutral";
  /** 1 to 500, default 100. */
  limit?: number;
  /** The id of the last voice already seen: the page starts after it. */
  after?: string;
}

/** One page, in the shape of OpenAI's lists (the route adds `object: "list"`). */
export interface VoicePage {
  data: Voice[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** What a `voice` of a speech request names: the engine and that engine's own voice name. */
export interface ResolvedVoice {
  engine: SpeechEngine;
  /** The engine's name for it: `slt` for `flite:slt`. */
  voice: string;
  /** The catalogue id actually spoken (for `alloy` without an upstream, e.g. `flite:slt`). */
  id: string;
}

export interface VoiceCatalogue {
  /** Every voice of every available engine, in catalogue order. */
  all(): Promise<Voice[]>;
  list(query?: VoiceQuery): Promise<VoicePage>;
  /**
   * The engine and voice a request's `voice` names: a catalogue id (`flite:slt`), or one of OpenAI's names.
   * Throws a 400 `voice_not_found` for anything else, and a 503 `engine_unavailable` (with the install
   * command) for a voice of an engine that cannot run here.
   */
  resolve(voice: string): Promise<ResolvedVoice>;
}

/**
 * The catalogue over these engines, in this order.
 *
 * @example
 * const catalogue = voiceCatalogue([upstreamSpeechEngine(settings), fliteEngine(), espeakEngine()]);
 * const page = await catalogue.list({ language: "en", gender: "female", limit: 20 });
 * const { engine, voice } = await catalogue.resolve("alloy");
 */
export function voiceCatalogue(engines: readonly SpeechEngine[]): VoiceCatalogue {
  const rank = (provider: string) => engines.findIndex((engine) => engine.name === provider.toLowerCase());
  const all = async (): Promise<Voice[]> => {
    const lists = await Promise.all(
      engines.map(async (engine) => ((await engine.available()).ok ? sortById(await engine.voices()) : [])),
    );
    return lists.flat();
  };

  return {
    all,
    async list(query = {}) {
      const limit = query.limit ?? DEFAULT_VOICE_LIMIT;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_VOICE_LIMIT)
        throw new BadInputError(
          `limit must be an integer from 1 to ${MAX_VOICE_LIMIT}`,
          "bad_request",
          "limit",
        );
      let voices = (await all()).filter((voice) => matches(voice, query));
      if (query.after !== undefined) {
        const cursor = query.after;
        const cursorRank = rank(cursor.split(":")[0] ?? "");
        if (!cursor.includes(":") || cursorRank < 0)
          throw new BadInputError(
            `after must be a voice id from this list, not ${cursor}`,
            "bad_request",
            "after",
          );
        voices = voices.filter((voice) => {
          const r = rank(voice.provider);
          return r > cursorRank || (r === cursorRank && voice.id > cursor);
        });
      }
      const data = voices.slice(0, limit);
      return {
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: voices.length > limit,
      };
    },
    async resolve(name) {
      if (name.includes(":")) return resolveId(engines, name);
      const candidates = openaiVoiceCandidates(name);
      // An OpenAI-compatible upstream takes OpenAI's names even when its own list names others
      // (Kokoro-FastAPI maps them to its voices), and any name its list has.
      const upstream = engines.find((engine) => engine.name === "upstream");
      if (
        upstream &&
        (await upstream.available()).ok &&
        (candidates !== undefined || (await hasVoice(upstream, `upstream:${name}`)))
      )
        return { engine: upstream, voice: name, id: `upstream:${name}` };
      let missing: SpeechEngine | undefined;
      for (const id of candidates ?? []) {
        const engine = engines.find((e) => e.name === id.split(":")[0]);
        if (!engine) continue;
        if (!(await engine.available()).ok) missing ??= engine;
        else if (await hasVoice(engine, id)) return { engine, voice: id.slice(id.indexOf(":") + 1), id };
      }
      // OpenAI's name is known, only no engine that speaks it can run here: the operator's to fix.
      if (missing) throw await unavailable(missing, engines);
      throw unknownVoice(name);
    },
  };
}

/** Whether a voice speaks a language: `en` matches `en-US`; `en-US` does not match `en`. */
export function speaksLanguage(voice: Voice, language: string): boolean {
  const wanted = language.toLowerCase();
  return voice.languages.some((tag) => {
    const have = tag.toLowerCase();
    return have === wanted || have.startsWith(`${wanted}-`);
  });
}

/**
 * A language tag as BCP 47 writes it: language lower case, script title case, region upper case, and the
 * script before the region (espeak-ng writes `chr-US-Qaaa-x-west`, BCP 47 `chr-Qaaa-US-x-west`). Every
 * subtag after a singleton (`x-`, `u-`) is kept as it was, lower-cased. No aliases are applied (`cmn`
 * stays `cmn`): the tag is the program's, only written properly.
 */
export function languageTag(tag: string): string {
  const [language = "", ...rest] = tag.split(/[-_]/).filter(Boolean);
  const singleton = rest.findIndex((part) => part.length === 1);
  const subtags = singleton < 0 ? rest : rest.slice(0, singleton);
  const tail = singleton < 0 ? [] : rest.slice(singleton).map((part) => part.toLowerCase());
  const scripts = subtags.filter((part) => /^[a-z]{4}$/i.test(part));
  const regions = subtags.filter((part) => /^([a-z]{2}|\d{3})$/i.test(part));
  const variants = subtags.filter((part) => !scripts.includes(part) && !regions.includes(part));
  return [
    language.toLowerCase(),
    ...scripts.map((s) => s[0]?.toUpperCase() + s.slice(1).toLowerCase()),
    ...regions.map((r) => r.toUpperCase()),
    ...variants.map((v) => v.toLowerCase()),
    ...tail,
  ].join("-");
}

async function resolveId(engines: readonly SpeechEngine[], id: string): Promise<ResolvedVoice> {
  const provider = id.slice(0, id.indexOf(":")).toLowerCase();
  const engine = engines.find((e) => e.name === provider);
  if (!engine) throw unknownVoice(id);
  if (!(await engine.available()).ok) throw await unavailable(engine, engines);
  const canonical = `${provider}${id.slice(id.indexOf(":"))}`;
  const name = canonical.slice(provider.length + 1);
  // As with bare names: an OpenAI-compatible upstream takes OpenAI's names whatever its list says.
  const openaiName = provider === "upstream" && openaiVoiceCandidates(name) !== undefined;
  if (!openaiName && !(await hasVoice(engine, canonical))) throw unknownVoice(id);
  return { engine, voice: name, id: canonical };
}

/** The 503 for a voice whose engine cannot run here, with the command that installs the speech engines. */
async function unavailable(engine: SpeechEngine, engines: readonly SpeechEngine[]): Promise<AppError> {
  const availability = await engine.available();
  return engineUnavailable(
    "speech",
    engine,
    availability.ok ? "it is not ready" : availability.reason,
    engines,
  );
}

/** The offline voices an OpenAI name maps to; undefined for any other name (`constructor` included). */
function openaiVoiceCandidates(name: string): readonly string[] | undefined {
  const key = name.toLowerCase();
  return Object.hasOwn(OPENAI_VOICE_MAP, key)
    ? OPENAI_VOICE_MAP[key as keyof typeof OPENAI_VOICE_MAP]
    : undefined;
}

async function hasVoice(engine: SpeechEngine, id: string): Promise<boolean> {
  return (await engine.voices()).some((voice) => voice.id === id);
}

function matches(voice: Voice, query: VoiceQuery): boolean {
  if (query.provider !== undefined && voice.provider !== query.provider.toLowerCase()) return false;
  if (query.gender !== undefined && voice.gender !== query.gender) return false;
  if (query.language !== undefined && !speaksLanguage(voice, query.language)) return false;
  return true;
}

function sortById(voices: Voice[]): Voice[] {
  return [...voices].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function unknownVoice(voice: string): BadInputError {
  return new BadInputError(
    `no voice ${JSON.stringify(voice)} here: use an id from GET /v1/audio/voices or one of OpenAI's names (${OPENAI_VOICES.join(", ")})`,
    "voice_not_found",
    "voice",
  );
}
