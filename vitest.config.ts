import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // DuckDB is multi-threaded on its own; two forks keep a 2-core machine responsive.
    pool: "forks",
    maxWorkers: 2,
  },
});
