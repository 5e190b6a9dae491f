/**
 * One trial: one task, one container. The agent's files, the harness and the task input go in
 * as read-only task files; the container has no network, runs as a non-root user under memory,
 * CPU and pids limits, and is killed at the trial's deadline (with a second deadline around the
 * whole run, so an engine that stops answering cannot hang the worker either). The environment
 * is the task's and the miner's values, never the run token, the telemetry session or an
 * attempt token. The output file comes back through the harness's frame; scoring is the
 * caller's (the checker runs here in the worker, outside the container).
 */
import { randomBytes } from "node:crypto";
import {
  TaskAbortedError,
  type TaskFile,
  type TaskResult,
  type TaskRunner,
  taskFile,
} from "@platform/challenge-sdk/tasks";
import { envSpellings, redactSecrets } from "../live/redaction.js";
import {
  AGENT_OUTPUT_CAP,
  AGENT_STREAM_CAP,
  HARNESS_PATH,
  HARNESS_SOURCE,
  INPUT_PATH,
  OUTPUT_FILE,
  readFramedOutput,
} from "./trial-harness.js";

/** The sandbox's limits for one trial (lower than the hardened defaults). */
export const TRIAL_LIMITS = Object.freeze({
  cpus: 1,
  memoryMb: 512,
  pids: 128,
  tmpfsMb: 64,
  outputBytes: 1024 * 1024,
});
/** How long past its own deadline a run may take (container creation, file staging, removal). */
export const TRIAL_RUN_MARGIN_MS = 60_000;
/** At most this many lines of a trial's output are reported, each at most this long. */
export const MAX_EVENT_LINES = 400;
export const MAX_EVENT_LINE_CHARS = 2048;

/** Names the worker sets itself, or that would change how the harness and python start. */
const RESERVED_ENV = /^(TASK_.*|PATH|HOME|PYTHON.*|LD_.*|EVAL_RUN_TOKEN|TELEMETRY_GRANT)$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** What a trial shows the agent: the family's id and instructions, the instance's input. */
export interface TrialTask {
  id: string;
  instructions: string;
  input: string;
}

export interface TrialInput {
  runner: TaskRunner;
  image: string;
  jobId: string;
  task: TrialTask;
  agentFiles: readonly TaskFile[];
  /** The miner's env values (GET env); reserved or malformed names are left out. */
  minerEnv: Record<string, string>;
  timeoutSeconds: number;
}

export interface TrialLine {
  stream: "stdout" | "stderr";
  message: string;
}

export interface TrialRun {
  /** The agent's output file as copied out; null when there is none to check. */
  output: Buffer | null;
  /** ok | missing | too_large | no_frame | timed_out | oom_killed. */
  outputStatus: string;
  agentExitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** The container's output lines (the frame left out), capped. */
  lines: TrialLine[];
}

/** Whether a miner's env name reaches the container (valid, and not one the worker owns). */
export const passesToAgent = (name: string): boolean =>
  ENV_NAME.test(name) && !RESERVED_ENV.test(name);

/** The container's environment: the miner's passable values, then the task's. */
export function trialEnv(
  task: TrialTask,
  minerEnv: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(minerEnv)) {
    if (passesToAgent(name) && typeof value === "string") env[name] = value;
  }
  return {
    ...env,
    TASK_ID: task.id,
    TASK_INSTRUCTIONS: task.instructions,
    TASK_INPUT: `/workspace/${INPUT_PATH}`,
    TASK_OUTPUT: OUTPUT_FILE,
    PYTHONDONTWRITEBYTECODE: "1",
  };
}

/** Run one trial to its end; a runner that cannot run it at all throws its TaskError. */
export async function runTrial(input: TrialInput): Promise<TrialRun> {
  const marker = `@@agent-eval-output-${randomBytes(12).toString("hex")}@@`;
  let result: TaskResult;
  try {
    result = await input.runner.run(
      {
        jobId: input.jobId,
        image: input.image,
        command: [
          "python3",
          `/workspace/${HARNESS_PATH}`,
          marker,
          String(AGENT_STREAM_CAP),
          String(AGENT_OUTPUT_CAP),
        ],
        env: trialEnv(input.task, input.minerEnv),
        files: [
          taskFile(HARNESS_PATH, HARNESS_SOURCE),
          taskFile(INPUT_PATH, input.task.input),
          ...input.agentFiles,
        ],
        limits: TRIAL_LIMITS,
        timeoutSeconds: input.timeoutSeconds,
        labels: { "agent-eval.role": "trial" },
      },
      { signal: AbortSignal.timeout(input.timeoutSeconds * 1000 + TRIAL_RUN_MARGIN_MS) },
    );
  } catch (error) {
    // Our own second deadline: the trial took too long, whatever the engine was doing.
    if (error instanceof TaskAbortedError) {
      return {
        output: null,
        outputStatus: "timed_out",
        agentExitCode: null,
        timedOut: true,
        durationMs: input.timeoutSeconds * 1000 + TRIAL_RUN_MARGIN_MS,
        lines: [],
      };
    }
    throw error;
  }
  const framed = readFramedOutput(result.stdout, marker);
  const lines = reportedLines(
    [
      ...framed.lines.map((message) => ({ stream: "stdout" as const, message })),
      ...splitLines(result.stderr).map((message) => ({ stream: "stderr" as const, message })),
    ],
    Object.values(input.minerEnv),
  );
  // A killed container's partial frame is not an answer.
  const outputStatus = result.timedOut
    ? "timed_out"
    : result.oomKilled
      ? "oom_killed"
      : framed.status;
  return {
    output: outputStatus === "ok" ? framed.output : null,
    outputStatus,
    agentExitCode: framed.agentExitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    lines,
  };
}

/**
 * The lines reported as telemetry: at most {@link MAX_EVENT_LINES} of them, each redacted whole
 * (the miner's env values in every spelling, and the secret shapes: the same redaction the
 * service applies again) and only then cut to {@link MAX_EVENT_LINE_CHARS}. Cutting first would
 * leave the start of a value that straddles the cut, which no exact match finds any more.
 * Dropping whole lines past the count first is safe: a dropped line shows nothing.
 */
export function reportedLines(lines: readonly TrialLine[], values: readonly string[]): TrialLine[] {
  const secrets = { exact: envSpellings(values) };
  return lines.slice(0, MAX_EVENT_LINES).map((line) => ({
    stream: line.stream,
    message: cutLine(redactSecrets(line.message, secrets), MAX_EVENT_LINE_CHARS),
  }));
}

/** `text` cut to at most `max` UTF-16 units, never between the halves of a surrogate pair. */
function cutLine(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}
