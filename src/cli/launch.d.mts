/** The command line's `main` (src/cli/main.ts), from the bundle of the sources or from the sources. */
export function loadMain(): Promise<(argv: string[]) => Promise<number>>;

/** The bundle of `root`'s src/cli/main.ts for its sources as they are now (src/cli/launch.mjs). */
export function cliBundle(options: { root: string }): Promise<{ file: string; built: boolean }>;
