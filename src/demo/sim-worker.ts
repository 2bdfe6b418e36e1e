/** The simulator's thread (sim-thread.ts): `runSimulator` with the options it was given, told by messages. */
import { parentPort, workerData } from "node:worker_threads";
import { crossed, type FromThread, type ToThread } from "./sim-thread.ts";
import { runSimulator } from "./simulator.ts";

const port = parentPort;
if (!port) throw new Error("sim-worker.ts runs on a worker thread (sim-thread.ts)");
const send = (message: FromThread) => port.postMessage(message);
const controller = new AbortController();
port.on("message", (message: ToThread) => {
  if (message.type === "abort") controller.abort();
});

try {
  const stats = await runSimulator({
    ...crossed(workerData.options),
    signal: controller.signal,
    onEvent: (event) => send({ type: "event", event }),
  });
  send({ type: "done", stats });
} catch (error) {
  send({ type: "failed", message: (error as Error).message, stack: (error as Error).stack });
}
