/**
 * What the offline speech engines (flite, espeak-ng) share: when one can run, and what it refuses to
 * speak. The route checks both before payment; an engine called directly checks them itself.
 */
import { BadInputError } from "../../../../common/errors.ts";
import {
  DEFAULT_ENCODERS,
  ENCODER_PACKAGES,
  type EncoderPrograms,
  encoderFor,
  offlineFormats,
} from "../encode.ts";
import type { Availability, SpeechFormat, SpeechRequest } from "../engine.ts";
import {
  DEFAULT_PROGRAM_MAX_BYTES,
  DEFAULT_PROGRAM_TIMEOUT_MS,
  once,
  type ProgramSpec,
  programsAvailability,
  runProgram,
} from "../program.ts";

/** An offline engine's settings: its program, the encoders, and the limits of each run. */
export interface OfflineSpeechSettings {
  /** The engine's program: a name on the PATH (default the engine's own) or an absolute path. */
  program?: string;
  /** Where lame and sox are (default: on the PATH). */
  encoders?: Partial<EncoderPrograms>;
  /** Time limit of each program run (synthesis, then any tempo change and encoding), default 30 s. */
  timeoutMs?: number;
  /** Cap of the WAV and of the encoded answer, default 64 MB. */
  maxBytes?: number;
}

/** An offline engine's settings resolved, and what follows from them: the programs it needs, its formats. */
export interface OfflineSpeechSetup {
  program: string;
  encoders: EncoderPrograms;
  timeoutMs: number;
  maxBytes: number;
  /** Its own program, and lame for MP3. */
  needed: readonly ProgramSpec[];
  formats: readonly SpeechFormat[];
  /** The Debian packages that install it and its encoders. */
  packages: readonly string[];
}

/** The settings of the engine whose program is `command` by default, from Debian's `debianPackage`. */
export function offlineSpeechSetup(
  settings: OfflineSpeechSettings,
  command: string,
  debianPackage: string,
): OfflineSpeechSetup {
  const program = settings.program ?? command;
  const encoders = { ...DEFAULT_ENCODERS, ...settings.encoders };
  const spec: ProgramSpec = { command: program, debianPackage };
  return {
    program,
    encoders,
    timeoutMs: settings.timeoutMs ?? DEFAULT_PROGRAM_TIMEOUT_MS,
    maxBytes: settings.maxBytes ?? DEFAULT_PROGRAM_MAX_BYTES,
    needed: [spec, encoderFor("mp3", encoders) as ProgramSpec],
    formats: offlineFormats(encoders),
    packages: [debianPackage, ...ENCODER_PACKAGES],
  };
}

/**
 * The engine's voices, read once from its program's listing (`args`) and parsed; a listing that names none
 * is an error (the program is there but broken), which `offlineAvailability` reports.
 */
export function voiceListing<T>(
  program: string,
  args: readonly string[],
  label: string,
  parse: (listing: string) => T[],
): () => Promise<T[]> {
  return once(async () => {
    const { stdout } = await runProgram({ program, args: [...args], timeoutMs: 10_000, label });
    const listing = stdout.toString("utf8");
    const list = parse(listing);
    if (list.length === 0) throw new Error(`${label} ${args.join(" ")} listed no voices: ${listing.trim()}`);
    return list;
  });
}

/**
 * Whether the engine `name` can run: every program it `needs` is installed (its own, and lame for MP3,
 * OpenAI's default: without it most requests could not be answered), and its voice list can be read, so
 * that a program present but broken is unavailable too.
 */
export async function offlineAvailability(
  name: string,
  needs: readonly ProgramSpec[],
  listVoices: () => Promise<unknown>,
): Promise<Availability> {
  const programs = programsAvailability(needs);
  if (!programs.ok) return programs;
  try {
    await listVoices();
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `${name} does not run: ${(error as Error).message}` };
  }
}

/** Refuses a request the engine cannot honour: a format it cannot make here, a speed out of range. */
export function checkSpeechRequest(
  name: string,
  formats: readonly SpeechFormat[],
  request: SpeechRequest,
): void {
  if (!formats.includes(request.format))
    throw new BadInputError(
      `${name} cannot answer in ${request.format} here`,
      "unsupported_format",
      "response_format",
    );
  if (!(request.speed >= 0.25 && request.speed <= 4))
    throw new BadInputError("speed must be between 0.25 and 4", "bad_request", "speed");
}
