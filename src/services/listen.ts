import { AppError } from "../common/errors.ts";
import { type Fetch, type Listening, listen, listenWithUrl } from "../common/listen.ts";
import { portSetting } from "../config/ports.ts";

/** `listen`, where a port in use is an error that names the service and where its port is set. */
export function listenOn(service: string, fetch: Fetch, host: string, port: number): Promise<Listening> {
  return named(service, port, listen(fetch, host, port));
}

/** `listenWithUrl`, with the same error for a port in use. */
export function listenWithUrlOn(
  service: string,
  build: (url: string) => Promise<Fetch>,
  host: string,
  port: number,
): Promise<Listening> {
  return named(service, port, listenWithUrl(build, host, port));
}

async function named(service: string, port: number, listening: Promise<Listening>): Promise<Listening> {
  try {
    return await listening;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    throw new AppError(
      500,
      "port_in_use",
      `the ${service} port ${port} is in use: stop what holds it or set ${portSetting(service)} (0 picks a free one)`,
    );
  }
}
