// A worker thread's entry (the utility API's `job-thread.ts`, the demo's `sim-thread.ts`): the sources are
// TypeScript run through tsx, which each thread registers for itself; then the worker's module, named by the thread.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.module);
