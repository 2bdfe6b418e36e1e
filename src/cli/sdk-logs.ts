/**
 * The x402 SDK writes to the console on its own: every settlement's extension responses with console.log
 * (on stdout, where our commands print their result), and at startup Ajv's "unknown format" warning for
 * every route whose schema documents a `format` such as `uri` (the SDK's validator has no format plugin;
 * formats are documentation there). Those lines are dropped; anything else goes to stderr.
 */
const DROPPED = [/^\[x402\] extension responses/, /^unknown format "[^"]+" ignored in schema/];

export function quietSdkLogs(): void {
  const keep = (args: unknown[]) =>
    !(typeof args[0] === "string" && DROPPED.some((re) => re.test(args[0] as string)));
  const { error, warn } = console;
  console.log = (...args: unknown[]) => {
    if (keep(args)) error(...args);
  };
  console.warn = (...args: unknown[]) => {
    if (keep(args)) warn(...args);
  };
}
