import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { ContainerRunError } from "./container-run-error.js";
import { isMissing } from "./docker-errors.js";
import type { OutputCapture } from "./output-capture.js";

/** How long to wait for the last output after a container exits (ms). */
const DRAIN_MS = 2_000;

/** Options of {@link runAttachedContainer}. */
export interface AttachedRunOptions {
  /** Killed after this long; the outcome says `timedOut`. */
  timeoutSeconds: number;
  /** Receives the multiplexed output, capped. */
  capture: OutputCapture;
  /** Aborting kills the container; the outcome says `aborted`. */
  signal?: AbortSignal | undefined;
  /** Called once the container has started. */
  onStarted?: () => void;
}

/** How an attached run ended. */
export interface AttachedRunOutcome {
  /** From wait, else from inspect; null when neither could tell. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** The container was removed from outside before it could be waited on or inspected. */
  removed: boolean;
  oomKilled: boolean;
}

/**
 * Runs a created container to its end with its output attached: attaches before start (there is
 * no log file to read back), kills it at the timeout or on abort, waits, drains the last output
 * and reads OOM from inspect. A failed Docker call is a `ContainerRunError` naming its step; the
 * container is never removed here (`runTaskContainer` does that).
 */
export async function runAttachedContainer(
  container: Docker.Container,
  options: AttachedRunOptions,
): Promise<AttachedRunOutcome> {
  const { capture, signal } = options;
  const stream = await container
    .attach({ stream: true, stdout: true, stderr: true })
    .catch((error: unknown) => {
      throw new ContainerRunError("attach", error);
    });
  const drained = new Promise<void>((resolve) => {
    stream.on("data", (chunk: Buffer) => capture.write(chunk));
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
  let timedOut = false;
  let aborted = false;
  const kill = () => void container.kill().catch(() => {});
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, options.timeoutSeconds * 1000);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    try {
      await container.start();
    } catch (error) {
      throw new ContainerRunError("start", error);
    }
    options.onStarted?.();
    if (signal?.aborted) onAbort();
    let removed = false;
    let exitCode: number | null = null;
    try {
      const waited = (await container.wait()) as { StatusCode?: number };
      exitCode = typeof waited.StatusCode === "number" ? waited.StatusCode : null;
    } catch (error) {
      if (!isMissing(error)) throw new ContainerRunError("wait", error);
      removed = true;
    }
    clearTimeout(timer);
    await Promise.race([drained, sleep(DRAIN_MS)]);
    capture.end();
    let oomKilled = false;
    try {
      const state = (await container.inspect()).State;
      oomKilled = state.OOMKilled === true;
      if (exitCode === null && typeof state.ExitCode === "number") exitCode = state.ExitCode;
    } catch (error) {
      if (!isMissing(error)) throw new ContainerRunError("inspect", error);
      removed = true;
    }
    return { exitCode, timedOut, aborted, removed, oomKilled };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  }
}
