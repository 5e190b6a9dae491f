import { redactText } from "@platform/core";
import { ConfigError } from "./challenge-config.js";
import type { StartOptions } from "./challenge-instance.js";
import type { Challenge } from "./define-challenge.js";
import type { RunningChallenge } from "./running-challenge.js";

/** Options of {@link runChallenge}. */
export interface RunChallengeOptions extends StartOptions {
  /** Signals that stop the challenge gracefully (default SIGTERM and SIGINT). */
  signals?: readonly NodeJS.Signals[];
}

/**
 * The `main` of a challenge process (tests call `challenge.start()` instead): start it from the
 * environment, stop it gracefully on SIGTERM/SIGINT (a second signal exits at once). A bad configuration prints every bad
 * variable (never a value) and sets exit code 1 instead of throwing a stack trace.
 * @example await runChallenge(challenge); // src/main.ts
 */
export async function runChallenge<Cfg, State>(
  challenge: Challenge<Cfg, State>,
  options: RunChallengeOptions = {},
): Promise<RunningChallenge<Cfg, State> | undefined> {
  let running: RunningChallenge<Cfg, State>;
  try {
    running = await challenge.start(options);
  } catch (error) {
    const message =
      error instanceof ConfigError
        ? error.message
        : `Challenge failed to start: ${(error as Error).message}`;
    process.stderr.write(`${redactText(message)}\n`);
    process.exitCode = 1;
    return undefined;
  }
  let stopping = false;
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    running.instance.log.info("stopping", { signal });
    running.close().then(
      () => {
        for (const name of signals) process.off(name, onSignal);
      },
      (error: unknown) => {
        running.instance.log.error("stop failed", { error });
        process.exitCode = 1;
        for (const name of signals) process.off(name, onSignal);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return running;
}
