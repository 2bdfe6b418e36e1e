/**
 * Headless Chromium for the browser tests: Debian's package (`apt-get install -y chromium`, which .ci/run
 * does when it is missing), driven by playwright-core, which downloads no browser of its own.
 */
import fs from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = process.env.X402M_CHROMIUM ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does), or set X402M_CHROMIUM`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}
