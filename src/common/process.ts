/**
 * Whether a process with this pid exists: signal 0 checks without signalling. EPERM means it exists but
 * belongs to another user. Used to tell a stale lock or record, left by a killed process, from a live one.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
