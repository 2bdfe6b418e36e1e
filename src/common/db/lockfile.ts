import fs from "node:fs";
import { processAlive } from "../process.ts";
import { DatabaseBusyError } from "./database.ts";

/**
 * An exclusive lock on a directory for this process: a `<dir>.lock` file holding our pid, created with
 * O_EXCL. PGlite has no lock of its own and two processes writing one data directory corrupt it, so the
 * second opener must fail at once with a clear message. A lock left by a process that is gone (killed) is
 * stale and taken over. Returns the release function.
 */
export function lockDirectory(dir: string): () => void {
  const file = `${dir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, "wx");
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        fs.rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = Number.parseInt(readOrEmpty(file), 10);
    // Our own pid counts as busy too: two PGlite instances in one process corrupt the directory as well.
    if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
      throw new DatabaseBusyError(
        `the database in ${dir} is in use by process ${holder}: PGlite allows one process per directory ` +
          "(stop it, or set DATABASE_URL to share a PostgreSQL server)",
      );
    }
    fs.rmSync(file, { force: true });
  }
  throw new DatabaseBusyError(`cannot lock ${dir}: another process keeps taking the lock`);
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
