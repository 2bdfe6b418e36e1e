// A job process's entry (`job-process.ts`): the sources are TypeScript run through tsx, registered here since
// the child gets none of the host's flags; then the worker's module, named by its runner.
import { register } from "tsx/esm/api";

register();
await import(process.argv[2]);
