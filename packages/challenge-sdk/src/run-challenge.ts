import { redactText } from "@platform/core";
import { ConfigError } from "./challenge-config.js";
import type { Challenge, RunningChallenge, StartOptions } from "./define-challenge.js";

/** Options of {@link runChallenge}. */
export interface RunChallengeOptions extends StartOptions {
  /** Signals that stop the challenge gracefully (default SIGTERM and SIGINT). */
  signals?: readonly NodeJS.Signals[];
}

/**
 * The `main` of a challenge process: start it from the environment, stop it gracefully on
 * SIGTERM/SIGINT (a second signal exits at once). A bad configuration prints every bad
 * variable (never a value) and sets exit code 1 instead of throwing a stack trace.
 * @example await runChallenge(challenge); // src/main.ts
 */
export async function runChallenge<Cfg>(
  challenge: Challenge<Cfg>,
  options: RunChallengeOptions = {},
): Promise<RunningChallenge<Cfg> | undefined> {
  let running: RunningChallenge<Cfg>;
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
    running.runtime.log.info("stopping", { signal });
    running.close().then(
      () => {
        for (const name of signals) process.off(name, onSignal);
      },
      (error: unknown) => {
        running.runtime.log.error("stop failed", { error });
        process.exitCode = 1;
        for (const name of signals) process.off(name, onSignal);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return running;
}
