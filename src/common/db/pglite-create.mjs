// `node pglite-create.mjs DIR`, run by `createCluster` (pglite.ts): PGlite creates the cluster in DIR
// (initdb in WASM) and closes it. Plain JavaScript, so the process needs no tsx. A failure is one line on
// stderr and exit code 1.
import { PGlite } from "@electric-sql/pglite";

try {
  const db = await PGlite.create({ dataDir: process.argv[2] });
  await db.close();
} catch (error) {
  // PGlite's file errors carry an errno and no message.
  const reason =
    error?.message ||
    `${error?.name ?? "error"}${error?.errno === undefined ? "" : ` (errno ${error.errno})`}`;
  process.stderr.write(`${String(reason).split("\n")[0]}\n`);
  process.exit(1);
}
