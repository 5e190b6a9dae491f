import type Docker from "dockerode";
import { type AttachedRunOutcome, runAttachedContainer } from "./_attached-run.js";
import { ContainerRunError } from "./container-run-error.js";
import { ignoreMissing } from "./docker-errors.js";
import { removeFilesVolume, stageFilesVolume } from "./files-volume.js";
import {
  type HardenedContainerContext,
  hardenedContainerOptions,
  type SandboxSpec,
} from "./hardened-container.js";
import type { OutputCapture } from "./output-capture.js";
import type { PlacedFile } from "./task-files.js";

/** One task container to run on an engine, everything about it already checked. */
export interface TaskContainerRun {
  spec: SandboxSpec;
  /** The builder's context; the files volume is named after the container and set here. */
  context: Omit<HardenedContainerContext, "filesVolume">;
  /** Placed read-only under /workspace (none: no volume). */
  files: readonly PlacedFile[];
  /** Killed after this long; the outcome says `timedOut`. */
  timeoutSeconds: number;
  /** Receives the output; its cap and line listener are the caller's. */
  capture: OutputCapture;
  /** Aborting kills the container; the outcome says `aborted`. */
  signal?: AbortSignal | undefined;
  /** Called once the container has started. */
  onStarted?: () => void;
  /**
   * Awaited with the outcome BEFORE anything is removed, so a caller's record of the run ends
   * before its container disappears (the broker's ledger relies on that order).
   */
  beforeRemoval?: (outcome: TaskContainerOutcome) => Promise<void>;
}

/** How a task container's run ended. */
export interface TaskContainerOutcome extends AttachedRunOutcome {
  /** From start to exit, drained output included. */
  durationMs: number;
}

const NEVER_STARTED: TaskContainerOutcome = {
  exitCode: null,
  timedOut: false,
  aborted: false,
  removed: false,
  oomKilled: false,
  durationMs: 0,
};

async function createAndRun(
  docker: Docker,
  run: TaskContainerRun,
  filesVolume: string | null,
  created: (container: Docker.Container) => void,
): Promise<TaskContainerOutcome> {
  let container: Docker.Container;
  try {
    container = await docker.createContainer(
      hardenedContainerOptions(run.spec, { ...run.context, filesVolume }),
    );
  } catch (error) {
    throw new ContainerRunError("create", error);
  }
  created(container);
  const began = Date.now();
  const attached = await runAttachedContainer(container, {
    timeoutSeconds: run.timeoutSeconds,
    capture: run.capture,
    signal: run.signal,
    ...(run.onStarted ? { onStarted: run.onStarted } : {}),
  });
  return { ...attached, durationMs: Date.now() - began };
}

/**
 * Runs one hardened task container on an engine from start to removal: fills its files volume
 * (`stageFilesVolume`), creates it with `hardenedContainerOptions`, runs it attached (output
 * captured as it comes, killed at the timeout or on abort, OOM read from inspect), then removes
 * the container and its volume whatever happened (`beforeRemoval` first, when it got that far;
 * an abort while the files were placed never creates the container). The SDK's docker runner and the master's
 * engine executor both run tasks through here; a failed Docker step is a `ContainerRunError`.
 * @example const outcome = await runTaskContainer(docker, { spec, context, files, timeoutSeconds: 60, capture });
 */
export async function runTaskContainer(
  docker: Docker,
  run: TaskContainerRun,
): Promise<TaskContainerOutcome> {
  const { name } = run.context;
  const { signal } = run;
  let filesVolume: string | null = null;
  let container: Docker.Container | undefined;
  try {
    if (run.files.length) {
      const labels = { ...run.spec.labels, ...run.context.labels };
      try {
        filesVolume = await stageFilesVolume(docker, {
          name,
          image: run.spec.image,
          files: run.files,
          labels,
        });
      } catch (error) {
        throw new ContainerRunError("files", error);
      }
    }
    // Aborted while the files were placed: the container is never created.
    const outcome = signal?.aborted
      ? { ...NEVER_STARTED, aborted: true }
      : await createAndRun(docker, run, filesVolume, (created) => {
          container = created;
        });
    await run.beforeRemoval?.(outcome);
    return outcome;
  } finally {
    await ignoreMissing(() =>
      (container ?? docker.getContainer(name)).remove({ force: true, v: true }),
    ).catch(() => {});
    if (run.files.length) await removeFilesVolume(docker, name);
  }
}
