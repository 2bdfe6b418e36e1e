/**
 * The configuration is made of sections, one per owner: the core every process reads (core.ts), the
 * merchant kit's, the facilitator service's, each merchant's. A section adds its top-level fields to the
 * one configuration, reads them from the flags and the environment, and names the flag or variable behind
 * each of them; `configLoader` puts a list of sections together (src/services/config.ts lists them).
 */
import { z } from "zod";
import { ConfigError } from "./config-error.ts";
import type { Env } from "./values.ts";

/** The flags a configuration is read from. */
export type ConfigFlags = Partial<Record<"data" | "publicUrl" | "host" | "port", string | undefined>>;

export interface ConfigInput {
  /** Command-line values; undefined means "not given". */
  flags?: ConfigFlags;
  env?: Env;
}

export interface Section<Schema extends z.ZodObject = z.ZodObject> {
  /** The fields it adds to the configuration, validated and transformed. */
  schema: Schema;
  /**
   * Its fields' raw values, for `schema` to validate: flags win over the environment, the environment over
   * the defaults. A setting that cannot even be read (a file that is not there) throws a ConfigError.
   */
  read(input: Required<ConfigInput>): { [Field in keyof Schema["shape"]]: unknown };
  /** The flag or environment variable behind a path in its fields, so an error names what to change. */
  settingOf(path: readonly string[]): string | undefined;
}

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** What a list of sections gives, side by side in one object. */
export type SettingsOf<Sections extends readonly Section[]> =
  Intersection<z.infer<Sections[number]["schema"]>> extends infer All ? { [K in keyof All]: All[K] } : never;

/** A section's setting by its path's first one or two names: `{ dataDir: ..., "metrics.port": ... }`. */
export function settingIn(
  names: Record<string, string>,
  [head, second]: readonly string[],
): string | undefined {
  return names[`${head}.${second}`] ?? names[head ?? ""];
}

/**
 * Reads `sections` together: every one is read, then the whole validated, so that what is read never
 * depends on what is wrong (test/config/env-documented.test.ts records the names read); a refusal names
 * the first setting the whole refuses.
 */
export function configLoader<const Sections extends readonly Section[]>(
  sections: Sections,
): (input?: ConfigInput) => SettingsOf<Sections> {
  const schema = z.object(Object.assign({}, ...sections.map((section) => section.schema.shape)));
  const settingOf = (path: readonly string[]) =>
    sections.find((section) => Object.hasOwn(section.schema.shape, path[0] ?? ""))?.settingOf(path) ??
    path.join(".");
  return ({ flags = {}, env = {} } = {}) => {
    const raw = Object.assign({}, ...sections.map((section) => section.read({ flags, env })));
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? settingOf(issue.path.map(String)) : "configuration";
      throw new ConfigError(`invalid ${where}: ${issue?.message}`);
    }
    return parsed.data as SettingsOf<Sections>;
  };
}
