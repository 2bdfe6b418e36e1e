/**
 * One anvil process: spawned, watched until it listens, stopped in order, and killed with its parent.
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import fs from "node:fs";
import { DevnetError } from "./devnet-errors.ts";

/** How long anvil has to exit on SIGTERM before it is killed (it writes nothing on exit). */
const STOP_GRACE_MS = 5_000;

export interface Anvil {
  pid: number;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** Spawns anvil and resolves with its port once it listens; rejects (and leaves nothing running) otherwise. */
export async function launch(binary: string, args: string[], timeoutMs: number): Promise<Anvil> {
  if (!fs.existsSync(binary)) throw new DevnetError(`anvil not found at ${binary}`);
  // On Linux, setpriv makes the kernel kill anvil when its parent dies, even by SIGKILL; it then execs
  // anvil, so the pid we hold is anvil's own.
  const pdeathsig = process.platform === "linux" && fs.existsSync("/usr/bin/setpriv");
  const child: ChildProcess = pdeathsig
    ? spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", binary, ...args], SPAWN_OPTIONS)
    : spawn(binary, args, SPAWN_OPTIONS);

  // anvil logs every RPC call and transaction to stdout: keep draining it (a full pipe would block anvil)
  // and keep the last lines for error messages.
  const tail: string[] = [];
  let onLine: ((line: string) => void) | undefined;
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let partial = "";
    stream?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        onLine?.(line);
      }
    });
  };
  collect(child.stdout);
  collect(child.stderr);

  const killOnExit = () => child.kill("SIGKILL");
  process.on("exit", killOnExit);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      process.off("exit", killOnExit);
      resolve({ code, signal });
    });
  });
  // A spawn failure (ENOENT, EACCES) comes as 'error' and may come without 'exit'.
  const failed = new Promise<Error>((resolve) => child.once("error", resolve));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await Promise.race([exited, failed]);
    clearTimeout(timer);
  };

  const describe = () => (tail.length > 0 ? `:\n${tail.join("\n")}` : "");
  let timer: NodeJS.Timeout | undefined;
  try {
    const port = await Promise.race([
      new Promise<number>((resolve) => {
        onLine = (line) => {
          const match = /Listening on [\d.]+:(\d+)/.exec(line);
          if (match) resolve(Number(match[1]));
        };
      }),
      exited.then(({ code, signal }) => {
        throw new DevnetError(`anvil exited (${signal ?? `code ${code}`}) before listening${describe()}`);
      }),
      failed.then((error) => {
        throw new DevnetError(`cannot start anvil: ${error.message}`);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new DevnetError(`anvil did not listen within ${timeoutMs} ms${describe()}`)),
          timeoutMs,
        );
      }),
    ]);
    onLine = undefined;
    return { pid: child.pid as number, port, exited, stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

const SPAWN_OPTIONS: SpawnOptions = {
  stdio: ["ignore", "pipe", "pipe"],
  // Own process group: a Ctrl-C in a terminal reaches only us, and we stop anvil in order.
  detached: true,
};

/** Whether `anvil` has already exited, without waiting for it to. */
export async function hasExited(anvil: Anvil): Promise<boolean> {
  const pending = Symbol();
  return (await Promise.race([anvil.exited, Promise.resolve(pending)])) !== pending;
}
