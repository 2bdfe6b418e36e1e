import { afterAll } from "vitest";
import { removeFileTempDirs } from "./helpers/temp-dirs.ts";

// Registered before the file's own hooks, so it runs after them (hooks run as a stack): the stores a file's
// afterAll closes are closed before their directories go.
afterAll(removeFileTempDirs);
