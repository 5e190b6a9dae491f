import { existsSync } from "node:fs";
import { isCi } from "@platform/core/testing";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium; playwright-core drives it and downloads no browser of its own. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Whether browser tests can run. Outside CI a missing Chromium skips them with a loud warning;
 * under CI (core's `isCi`) it is an error, so CI never passes without having looked at the pages.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (isCi())
    throw new Error(
      `CI is set but Chromium is missing at ${CHROMIUM_PATH} (apt-get install chromium)`,
    );
  console.warn(
    `\n!!! Browser tests SKIPPED: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium) !!!\n`,
  );
  return false;
}

/** Launch headless Chromium with the flags this sandboxed, offline machine needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
