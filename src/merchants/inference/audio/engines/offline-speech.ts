/**
 * What the offline speech engines (flite, espeak-ng) share: when one can run, and what it refuses to
 * speak. The route checks both before payment; an engine called directly checks them itself.
 */
import { BadInputError } from "../../../../common/errors.ts";
import type { Availability, SpeechFormat, SpeechRequest } from "../engine.ts";
import { type ProgramSpec, programsAvailability } from "../program.ts";

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
