/**
 * Offline English transcription by CMU PocketSphinx 0.8 (Debian's `pocketsphinx` and `pocketsphinx-en-us`,
 * BSD), run as its own process: `pocketsphinx_continuous` reads the upload as 16 kHz mono samples from a
 * private temporary file and prints each utterance its voice-activity detector finds, with every word's
 * start and end (`-time yes`) and posterior probability.
 *
 * Words become `words`; segments are runs of words cut at an utterance boundary, at a pause longer than
 * `segmentPause`, or before they grow past `maxSegmentSeconds`. Filler tokens (`<s>`, `</s>`, `<sil>`,
 * `[NOISE]`, `++BREATH++`) are dropped and alternate pronunciations (`to(2)`) read as their word. The text
 * is the recogniser's own: lower case, no punctuation (nothing is invented to look like Whisper).
 *
 * Measured on this project's 2-core hosts (test/merchants/inference/audio/pocketsphinx.test.ts): 0.13x to
 * 0.18x real time (34 s of flite's speech in 4.5 to 6.2 s, depending on the machine's other load), of
 * which about 0.35 s and 100 MB load the model; 15.7% word error rate on those sentences. Audio recorded
 * at 8 kHz (telephone band) is upsampled but transcribes badly: Debian ships only the 16 kHz model, which
 * expects energy up to 6.8 kHz. Runs take turns (`concurrency`, 1 by default): two at once on 2 cores
 * would each take twice as long and starve the server.
 */
import { constants } from "node:fs";
import { access, writeFile } from "node:fs/promises";
import path from "node:path";
import { BadInputError } from "../../../../common/errors.ts";
import type {
  Availability,
  Transcript,
  TranscriptionEngine,
  TranscriptionRequest,
  TranscriptSegment,
  TranscriptWord,
} from "../engine.ts";
import { assertLameStartsOnAudio, SPEECH_SAMPLE_RATE, toSpeechPcm } from "../pcm.ts";
import { findProgram, installCommand, runProgram, turns, withTempDir } from "../program.ts";

/** What installs the recogniser and its English model. */
export const POCKETSPHINX_INSTALL = installCommand(["pocketsphinx", "pocketsphinx-en-us"]);
/** Debian's English model (acoustic model, language model, dictionary). */
export const DEFAULT_MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";

/**
 * Bounds on the decoder's search per 10 ms frame: active HMMs (default 30,000) and words ending (default
 * unbounded). Unbounded, noise keeps the search wide: 30 s of tones and noise took 9.3 CPU-s, so the 300 s
 * a call may send about 92, three times the 30 CPU-s the route's price buys (issue 69, docs/benchmarks-log.md
 * "Worst case per paid call"); bounded, 2.6 (19-22 CPU-s for 299 s, paid), and flite's sentences decode to
 * the same words in a tenth of real time instead of a fifth.
 */
const SEARCH_BOUNDS = ["-maxhmmpf", "1500", "-maxwpf", "5"];

export interface PocketsphinxSettings {
  /** The recogniser; `pocketsphinx_continuous` in PATH by default. */
  command?: string;
  /** The MP3 decoder; `lame` in PATH by default. */
  lame?: string;
  /** Holds `en-us/` (acoustic model), `en-us.lm.bin` and `cmudict-en-us.dict`; Debian's by default. */
  modelDir?: string;
  /** A run may take this long plus `maxRealTimeFactor` × the audio's duration; 20 s by default. */
  baseTimeoutMs?: number;
  /** 1 by default: five times the speed measured here, room for a loaded host. */
  maxRealTimeFactor?: number;
  /** Seconds of silence between two words that end a segment; 0.5 by default. */
  segmentPause?: number;
  /** Seconds a segment grows to at most (it ends before a word that would take it past); 15 by default. */
  maxSegmentSeconds?: number;
  /** Recognisers running at once; 1 by default. */
  concurrency?: number;
}

/** One recognised word as pocketsphinx printed it: seconds, posterior probability, its utterance's number. */
export interface RecognisedWord extends TranscriptWord {
  confidence: number;
  utterance: number;
}

/**
 * The PocketSphinx transcription engine (English only).
 *
 * @example
 * const engine = pocketsphinxEngine();
 * if ((await engine.available()).ok) {
 *   const transcript = await engine.transcribe({ audio, info: probeAudio(audio), words: true, signal });
 * }
 */
export function pocketsphinxEngine(settings: PocketsphinxSettings = {}): TranscriptionEngine {
  const command = settings.command ?? "pocketsphinx_continuous";
  const modelDir = settings.modelDir ?? DEFAULT_MODEL_DIR;
  const model = {
    hmm: path.join(modelDir, "en-us"),
    lm: path.join(modelDir, "en-us.lm.bin"),
    dict: path.join(modelDir, "cmudict-en-us.dict"),
  };
  const turn = turns(settings.concurrency ?? 1);
  return {
    name: "pocketsphinx",
    languages: ["en"],
    packages: ["pocketsphinx", "pocketsphinx-en-us", "lame"],
    async available(): Promise<Availability> {
      const missing: string[] = [];
      if (!findProgram(command)) missing.push(command);
      const modelThere = await Promise.all(
        [path.join(model.hmm, "mdef"), model.lm, model.dict].map((file) =>
          access(file, constants.R_OK).then(
            () => true,
            () => false,
          ),
        ),
      );
      if (modelThere.includes(false)) missing.push("its English model");
      if (!findProgram(settings.lame ?? "lame")) missing.push("lame (the MP3 decoder)");
      if (missing.length === 0) return { ok: true };
      return {
        ok: false,
        reason: `offline transcription needs ${missing.join(", ")}, not installed on this server`,
      };
    },
    checkAudio(audio, info) {
      if (info.container === "mp3") assertLameStartsOnAudio(audio);
    },
    async transcribe(request: TranscriptionRequest): Promise<Transcript> {
      const { info, signal } = request;
      if (request.language !== undefined && !isEnglish(request.language))
        throw new BadInputError(
          `the offline transcription engine knows English only, not "${request.language}"`,
          "unsupported_language",
          "language",
        );
      return turn(signal, async () => {
        const samples = await toSpeechPcm(request.audio, info, { signal, lame: settings.lame });
        const seconds = samples.length / SPEECH_SAMPLE_RATE;
        // pocketsphinx 0.8 reads audio with fopen(): Node's stdin for a child is a socket, which fopen()
        // of /dev/stdin refuses, so the samples go through a private temporary file.
        const result = await withTempDir(async (dir) => {
          const raw = path.join(dir, "audio.raw");
          await writeFile(raw, new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength), {
            mode: 0o600,
          });
          return runProgram({
            label: "pocketsphinx",
            program: command,
            args: [
              ...["-infile", raw, "-time", "yes", "-hmm", model.hmm, "-lm", model.lm, "-dict", model.dict],
              ...SEARCH_BOUNDS,
            ],
            timeoutMs:
              (settings.baseTimeoutMs ?? 20_000) + seconds * 1000 * (settings.maxRealTimeFactor ?? 1),
            signal,
            // A word line is about 30 bytes; speech is at most about 4 words a second.
            maxBytes: 1024 * 1024 + Math.ceil(seconds) * 512,
            install: POCKETSPHINX_INSTALL,
          });
        });
        const words = parseWordTimes(result.stdout.toString("utf8"), info.durationSeconds);
        const segments = groupSegments(words, {
          pause: settings.segmentPause ?? 0.5,
          maxSeconds: settings.maxSegmentSeconds ?? 15,
        });
        return {
          language: "english",
          duration: info.durationSeconds,
          text: segments.map((s) => s.text).join(" "),
          segments,
          ...(request.words && { words: words.map(({ word, start, end }) => ({ word, start, end })) }),
        };
      });
    },
  };
}

/** `en`, `en-US`, `english` (any case): what a caller may name English as. */
function isEnglish(language: string): boolean {
  const l = language.trim().toLowerCase();
  return l === "en" || l.startsWith("en-") || l.startsWith("en_") || l === "english";
}

const FRAME_SECONDS = 0.01; // pocketsphinx's default -frate 100
const WORD_LINE = /^(\S+) (\d+\.\d+) (\d+\.\d+) (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/;

/**
 * The words of pocketsphinx_continuous's `-time yes` output, fillers dropped, in order. Each utterance is
 * a line of its text and then a `word start end posterior` line per token; a word's printed end is its
 * last 10 ms frame, so it ends one frame later. Times are clamped to the audio's duration.
 */
export function parseWordTimes(output: string, duration: number): RecognisedWord[] {
  const words: RecognisedWord[] = [];
  let utterance = -1;
  for (const line of output.split("\n")) {
    const match = WORD_LINE.exec(line.trim());
    if (!match) continue;
    const [, token = "", start = "0", end = "0", posterior = "0"] = match;
    if (token === "<s>") utterance++;
    if (isFiller(token)) continue;
    const from = milliseconds(Math.min(duration, Number(start)));
    words.push({
      word: token.replace(/\(\d+\)$/, ""),
      start: from,
      end: milliseconds(Math.max(from, Math.min(duration, Number(end) + FRAME_SECONDS))),
      confidence: Math.min(1, Math.max(0, Number(posterior))),
      utterance: Math.max(0, utterance),
    });
  }
  return words;
}

/** Seconds rounded to the millisecond: pocketsphinx counts 10 ms frames, float sums add noise. */
const milliseconds = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** Silence, sentence marks and noises the model knows: `<s>`, `<sil>`, `[NOISE]`, `++BREATH++`. */
function isFiller(token: string): boolean {
  return /^<.*>$/.test(token) || /^\[.*\]$/.test(token) || /^\+\+.*\+\+$/.test(token);
}

/**
 * Words into segments: a new one at each utterance, after a pause longer than `pause` seconds, or before a
 * word that would take it past `maxSeconds`. A segment's `avgLogprob` is the mean natural log of its
 * words' posteriors (the nearest thing pocketsphinx has to Whisper's mean token log-probability).
 */
export function groupSegments(
  words: readonly RecognisedWord[],
  options: { pause: number; maxSeconds: number },
): TranscriptSegment[] {
  const groups: RecognisedWord[][] = [];
  let current: RecognisedWord[] = [];
  for (const word of words) {
    const first = current[0];
    const previous = current.at(-1);
    if (
      first &&
      previous &&
      (word.utterance !== previous.utterance ||
        word.start - previous.end > options.pause ||
        word.end - first.start > options.maxSeconds)
    ) {
      groups.push(current);
      current = [];
    }
    current.push(word);
  }
  if (current.length > 0) groups.push(current);
  return groups.map((group, id) => ({
    id,
    start: (group[0] as RecognisedWord).start,
    end: (group.at(-1) as RecognisedWord).end,
    text: group.map((w) => w.word).join(" "),
    avgLogprob: group.reduce((sum, w) => sum + Math.log(Math.max(w.confidence, 1e-10)), 0) / group.length,
  }));
}
