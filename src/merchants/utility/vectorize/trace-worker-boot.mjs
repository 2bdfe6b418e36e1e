// The worker's entry: the sources are TypeScript run through tsx, which each thread registers for itself.
import { register } from "tsx/esm/api";

register();
await import("./trace-worker.ts");
