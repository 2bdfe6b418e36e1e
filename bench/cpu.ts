/**
 * CPU time of server-side processes, for the benchmarks (`bench/idle.ts`, `bench/paid.ts`), read from
 * /proc (Linux only; what cannot be read counts as nothing):
 *
 * - a process's CPU, all its threads, dead ones included (`/proc/PID/stat` utime + stime);
 * - the PostgreSQL backends a process opened: those whose client port (in the backend's process title,
 *   `postgres: ... 127.0.0.1(PORT) idle`) is the local port of a TCP socket the process holds. No query:
 *   asking the server would add a backend of its own to what is measured;
 * - the server's own processes (postmaster, checkpointer, WAL writer, ...): they work for every client of
 *   the server, this machine's other users included, so they are reported apart.
 *
 * A backend that comes and goes between two samples is missed, and one that exits loses what it spent
 * since its last sample: `meterCpu` samples every `sampleMs` (250) so that a pool that opens and closes
 * connections shows, in `opened` and in their CPU.
 */
import fs from "node:fs";

/** USER_HZ: /proc counts CPU time in ticks of 10 ms on Linux. */
const TICK_MS = 10;

function read(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** utime + stime of one `/proc/.../stat` line, in ms. */
function statCpuMs(stat: string): number {
  // After the command name (which may hold spaces and parentheses): utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** CPU time `pid` has used so far (every thread, ended ones too), in ms; null when it is gone. */
export function processCpuMs(pid: number): number | null {
  const stat = read(`/proc/${pid}/stat`);
  return stat ? statCpuMs(stat) : null;
}

/** CPU time of the whole machine so far, every core, busy only (not idle or iowait), in ms. */
export function machineBusyMs(): number {
  const cpu = read("/proc/stat").split("\n")[0]?.split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal
  if (cpu.length < 8) return 0;
  return (cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0)) * TICK_MS;
}

/** The local ports of the TCP sockets `pid` holds (IPv4 and IPv6). */
export function tcpPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  let fds: string[] = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return new Set();
  }
  for (const fd of fds) {
    try {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    for (const line of read(`/proc/${pid}/net/${table}`).split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const local = fields[1];
      if (local && fields[9] && inodes.has(fields[9]))
        ports.add(Number.parseInt(local.split(":")[1] ?? "", 16));
    }
  }
  return ports;
}

export interface PostgresProcess {
  pid: number;
  /** A backend serves one client connection; the server's processes serve everyone. */
  role: "backend" | "server";
  /** A backend's client port on 127.0.0.1 or ::1 (none for a Unix socket's). */
  clientPort?: number;
  cpuMs: number;
}

/** Every PostgreSQL process on this machine, from its process title. */
export function postgresProcesses(): PostgresProcess[] {
  const found: PostgresProcess[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (!stat.includes("(postgres)")) continue;
    const title = read(`/proc/${entry}/cmdline`).replace(/\0/g, " ");
    // "postgres: 15/main: postgres test 127.0.0.1(53916) idle"; the server's own: "... checkpointer",
    // the postmaster: its binary's path and options.
    const client = /\s(?:[\d.]+|\[?[0-9a-f:]+\]?)\((\d+)\)\s/.exec(title);
    const local = /\s\[local\]\s/.test(title);
    found.push({
      pid: Number(entry),
      role: client || local ? "backend" : "server",
      ...(client && { clientPort: Number(client[1]) }),
      cpuMs: statCpuMs(stat),
    });
  }
  return found;
}

/** The CPU a meter counted over its window, in ms, and what it saw of the followed processes' connections. */
export interface CpuCount {
  seconds: number;
  /** Each followed process's CPU, by the name it was given. */
  processes: Record<string, number>;
  /** The CPU of the PostgreSQL backends the followed processes opened, by the process's name. */
  backends: Record<string, number>;
  /** The PostgreSQL server's own processes (every client's work, the machine's other users' too). */
  postgresServer: number;
  /** The whole machine's busy CPU, every process. */
  machine: number;
  /** Per followed process: its backends open at the start and at the end, most at once, and opened. */
  connections: Record<string, { atStart: number; atEnd: number; most: number; opened: number }>;
}

export interface CpuMeter {
  /** Samples once more and returns the window's counts; the meter stops. */
  stop(): CpuCount;
}

/**
 * Follows the processes of `pids` (name -> pid), their PostgreSQL backends and the server's processes from
 * now until `stop()`.
 *
 * @example
 * const meter = meterCpu({ host: child.pid });
 * await sleep(10_000);
 * const { processes, backends } = meter.stop(); // processes.host, backends.host: ms over the window
 */
export function meterCpu(pids: Record<string, number>, sampleMs = 250): CpuMeter {
  const startedAt = performance.now();
  const processStart: Record<string, number> = {};
  const processLast: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    processStart[name] = processCpuMs(pid) ?? 0;
    processLast[name] = processStart[name];
  }
  /** Backend pid -> whose it is, its CPU when first seen (0 if it started within the window), last seen. */
  const backends = new Map<number, { owner: string; first: number; last: number; alive: boolean }>();
  const server = new Map<number, { first: number; last: number }>();
  const connections: CpuCount["connections"] = {};
  for (const name of Object.keys(pids)) connections[name] = { atStart: 0, atEnd: 0, most: 0, opened: 0 };
  const machineStart = machineBusyMs();

  const sample = (first: boolean) => {
    for (const [name, pid] of Object.entries(pids))
      processLast[name] = processCpuMs(pid) ?? processLast[name] ?? 0;
    const ports = new Map<number, string>();
    for (const [name, pid] of Object.entries(pids)) for (const port of tcpPortsOf(pid)) ports.set(port, name);
    const open = new Map<string, number>();
    for (const b of backends.values()) b.alive = false;
    for (const p of postgresProcesses()) {
      if (p.role === "server") {
        const known = server.get(p.pid);
        if (known) known.last = p.cpuMs;
        else server.set(p.pid, { first: first ? p.cpuMs : 0, last: p.cpuMs });
        continue;
      }
      let known = backends.get(p.pid);
      const owner = known?.owner ?? (p.clientPort !== undefined ? ports.get(p.clientPort) : undefined);
      if (!owner) continue;
      if (!known) {
        // Seen at the start: counted from now. Seen later: opened within the window, counted whole.
        known = { owner, first: first ? p.cpuMs : 0, last: p.cpuMs, alive: true };
        backends.set(p.pid, known);
        if (!first) (connections[owner] as CpuCount["connections"][string]).opened++;
      }
      known.last = p.cpuMs;
      known.alive = true;
      open.set(owner, (open.get(owner) ?? 0) + 1);
    }
    for (const [name, c] of Object.entries(connections)) {
      const now = open.get(name) ?? 0;
      if (first) c.atStart = now;
      c.atEnd = now;
      c.most = Math.max(c.most, now);
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), sampleMs);
  timer.unref();

  return {
    stop() {
      clearInterval(timer);
      sample(false);
      const processes: Record<string, number> = {};
      const owned: Record<string, number> = {};
      for (const name of Object.keys(pids)) {
        processes[name] = (processLast[name] ?? 0) - (processStart[name] ?? 0);
        owned[name] = 0;
      }
      for (const b of backends.values()) owned[b.owner] = (owned[b.owner] ?? 0) + b.last - b.first;
      let postgresServer = 0;
      for (const s of server.values()) postgresServer += s.last - s.first;
      return {
        seconds: (performance.now() - startedAt) / 1000,
        processes,
        backends: owned,
        postgresServer,
        machine: machineBusyMs() - machineStart,
        connections,
      };
    },
  };
}
