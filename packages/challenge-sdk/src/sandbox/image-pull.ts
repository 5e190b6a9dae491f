import type Docker from "dockerode";
import { dockerMessage } from "./docker-errors.js";

/** One progress line of `docker pull` (Docker's own JSON shape, fields kept as sent). */
export interface PullProgress {
  status?: string;
  id?: string;
  progress?: string;
  progressDetail?: { current?: number; total?: number };
}

/** Options of {@link pullImage}. */
export interface PullOptions {
  /** The pull is stopped after this long. */
  timeoutMs: number;
  /** Aborting stops the pull. */
  signal?: AbortSignal | undefined;
  /** Receives Docker's progress lines as they come. */
  onProgress?: (progress: PullProgress) => void;
}

interface PullLine extends PullProgress {
  error?: string;
  errorDetail?: { message?: string };
}

/** A pull failure's reason: one line, short enough for an API answer or an error message. */
function reasonOf(error: unknown): string {
  return dockerMessage(error).split("\n")[0]!.slice(0, 500);
}

/**
 * Pulls `image` through dockerode's `followProgress`, resolving when Docker has it, rejecting
 * with a one-line reason (unknown image, registry unreachable, timeout, cancelled). A failed
 * layer counts too: Docker answers 200 and reports it as an `error` line, which followProgress
 * passes on as progress.
 * @example await pullImage(docker, "ghcr.io/me/eval:1", { timeoutMs: 300_000, onProgress: console.log });
 */
export async function pullImage(
  docker: Docker,
  image: string,
  options: PullOptions,
): Promise<void> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const stopped = () =>
    new Error(
      timeout.aborted
        ? `the pull took longer than ${options.timeoutMs} ms`
        : "the pull was cancelled",
    );
  try {
    const stream = (await docker.pull(image, { abortSignal: signal })) as NodeJS.ReadableStream;
    await new Promise<void>((resolve, reject) => {
      let failure: string | undefined;
      docker.modem.followProgress(
        stream,
        (error: Error | null) => {
          // An abort may end the stream without an error: the signal says what happened.
          if (signal.aborted) reject(stopped());
          else if (error) reject(error);
          else if (failure !== undefined) reject(new Error(failure));
          else resolve();
        },
        (line: PullLine) => {
          if (line.error || line.errorDetail) {
            failure ??= line.errorDetail?.message ?? line.error ?? "the pull failed";
            return;
          }
          const { status, id, progress, progressDetail } = line;
          options.onProgress?.({ status, id, progress, progressDetail } as PullProgress);
        },
      );
    });
  } catch (error) {
    throw new Error(signal.aborted ? stopped().message : reasonOf(error), { cause: error });
  }
}

/**
 * {@link pullImage} as an async stream of its progress lines, for a caller that forwards them
 * (the master's server-sent pull events). Throws like pullImage once the lines are read.
 * @example for await (const line of pullProgress(docker, image, { timeoutMs })) send(line);
 */
export async function* pullProgress(
  docker: Docker,
  image: string,
  options: Omit<PullOptions, "onProgress">,
): AsyncGenerator<PullProgress> {
  const lines: PullProgress[] = [];
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  let ended = false;
  const pull = pullImage(docker, image, {
    ...options,
    onProgress: (line) => {
      lines.push(line);
      nudge();
    },
  }).finally(() => {
    ended = true;
    nudge();
  });
  // Kept from rejecting unobserved while lines are still being yielded; awaited at the end.
  pull.catch(() => {});
  while (!ended || lines.length) {
    if (lines.length) yield lines.shift()!;
    else await new Promise<void>((resolve) => (wake = resolve));
  }
  await pull;
}
