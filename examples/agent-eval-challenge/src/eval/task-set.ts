/**
 * The versioned task set (tasks/task-set.json): small deterministic text and data
 * transformations, each with its input and a checker. Loaded once at start; its revision id is
 * the sha256 of the canonical task list, so a plan naming a revision names exact tasks. The
 * checkers are pure functions of (task, output bytes): the eval worker runs them outside the
 * agent's container, on the output copied out, so an agent cannot rewrite its own judge.
 */
import { readFile } from "node:fs/promises";
import { canonicalDigest, canonicalJson } from "../crypto/index.js";

export const TASK_SET_SCHEMA_VERSION = "task-set/v1";

export interface TaskChecker {
  /** exact_text: the output equals `expected` (CRLF as LF, trailing whitespace ignored);
   *  json_equal: the output parses to JSON equal to `expected`'s. */
  kind: "exact_text" | "json_equal";
  expected: string;
}

export interface EvalTask {
  id: string;
  title: string;
  instructions: string;
  input: string;
  checker: TaskChecker;
}

export interface TaskSet {
  schema_version: typeof TASK_SET_SCHEMA_VERSION;
  revision_id: string;
  tasks: EvalTask[];
}

const TASK_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Reads and checks a task set file (throws with what is wrong: the service refuses to start). */
export async function loadTaskSet(path: URL | string): Promise<TaskSet> {
  const document = JSON.parse(await readFile(path, "utf8")) as {
    schema_version?: unknown;
    tasks?: unknown;
  };
  if (document.schema_version !== TASK_SET_SCHEMA_VERSION || !Array.isArray(document.tasks)) {
    throw new Error(`the task set is not ${TASK_SET_SCHEMA_VERSION} with a tasks array`);
  }
  const tasks = document.tasks as EvalTask[];
  const seen = new Set<string>();
  for (const task of tasks) {
    if (typeof task.id !== "string" || !TASK_ID.test(task.id) || seen.has(task.id)) {
      throw new Error(`task id ${JSON.stringify(task.id)} is invalid or repeated`);
    }
    seen.add(task.id);
    for (const field of ["title", "instructions", "input"] as const) {
      if (typeof task[field] !== "string") throw new Error(`task ${task.id}: ${field} is not text`);
    }
    const { kind, expected } = task.checker ?? {};
    if ((kind !== "exact_text" && kind !== "json_equal") || typeof expected !== "string") {
      throw new Error(`task ${task.id}: unknown checker`);
    }
  }
  if (tasks.length === 0) throw new Error("the task set has no task");
  return {
    schema_version: TASK_SET_SCHEMA_VERSION,
    revision_id: canonicalDigest(tasks),
    tasks,
  };
}

const normalizedText = (text: string) => text.replace(/\r\n/g, "\n").trimEnd();

/** The checker's score of one trial's output: 1 (correct) or 0. */
export function checkTaskOutput(task: EvalTask, output: Buffer): 0 | 1 {
  const text = output.toString("utf8");
  if (task.checker.kind === "exact_text") {
    return normalizedText(text) === normalizedText(task.checker.expected) ? 1 : 0;
  }
  try {
    const got = canonicalJson(JSON.parse(text));
    return got === canonicalJson(JSON.parse(task.checker.expected)) ? 1 : 0;
  } catch {
    return 0;
  }
}
