// A job process's entry (`job-process.ts`): the worker's module, named by its runner. Its bundle ("bundle" after
// it: plain JavaScript, src/cli/launch.mjs) is imported as it is; its TypeScript source needs tsx, registered
// here since the child gets none of the host's flags. Either way the process names this file, whatever it runs.
if (process.argv[3] !== "bundle") {
  const { register } = await import("tsx/esm/api");
  register();
}
await import(process.argv[2]);
