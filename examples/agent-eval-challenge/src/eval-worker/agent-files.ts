/**
 * The agent ZIP as a trial's task files: unpacked under the task runner's file caps (at most 256
 * files, 16 MiB in all) with room left for the harness and the task input, placed under
 * /workspace/agent (which /agent links to in the agent image). An agent without a top-level
 * agent.py cannot run at all.
 */
import { readZip } from "@platform/challenge-sdk";
import { type TaskFile, taskFile } from "@platform/challenge-sdk/tasks";
import { AGENT_DIRECTORY } from "./trial-harness.js";

/** Below the runner's caps: the harness and the input take two files and a little room. */
export const AGENT_FILE_LIMITS = Object.freeze({
  maxFiles: 250,
  maxUnpackedBytes: 12 * 1024 * 1024,
});

export type AgentFiles =
  | { ok: true; files: TaskFile[]; count: number; bytes: number }
  | { ok: false; code: string; message: string };

/** The task files of the agent in `zip`, or why it cannot run. */
export async function agentTaskFiles(zip: Buffer): Promise<AgentFiles> {
  const read = await readZip(zip, { limits: AGENT_FILE_LIMITS, noun: "agent ZIP" });
  if (!read.ok) return { ok: false, code: read.error.code, message: read.error.message };
  if (!read.value.some((entry) => entry.path === "agent.py")) {
    return {
      ok: false,
      code: "no_entry_point",
      message: "the agent ZIP has no top-level agent.py",
    };
  }
  return {
    ok: true,
    files: read.value.map((entry) => taskFile(`${AGENT_DIRECTORY}/${entry.path}`, entry.data)),
    count: read.value.length,
    bytes: read.value.reduce((sum, entry) => sum + entry.data.length, 0),
  };
}
