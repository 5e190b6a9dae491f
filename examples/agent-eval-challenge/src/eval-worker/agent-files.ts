/**
 * The agent ZIP as a trial's task files: read under the one agent archive rule set the
 * submission and the review used (AGENT_ARCHIVE, whose limits leave the task runner's file caps
 * room for the harness and the task input), placed under /workspace/agent (which /agent links
 * to in the agent image). An agent without a top-level agent.py cannot run at all.
 */
import { readArchive } from "@platform/challenge-sdk";
import { type TaskFile, taskFile } from "@platform/challenge-sdk/tasks";
import { AGENT_ARCHIVE } from "../submissions/agent-archive.js";
import { AGENT_DIRECTORY } from "./trial-harness.js";

export type AgentFiles =
  | { ok: true; files: TaskFile[]; count: number; bytes: number }
  | { ok: false; code: string; message: string };

/** The task files of the agent in `zip`, or why it cannot run. */
export async function agentTaskFiles(zip: Buffer): Promise<AgentFiles> {
  const read = await readArchive(zip, AGENT_ARCHIVE);
  if (!read.ok) return { ok: false, code: read.error.code, message: read.error.message };
  const files = read.value.files;
  if (!files.some((entry) => entry.path === "agent.py")) {
    return {
      ok: false,
      code: "no_entry_point",
      message: "the agent ZIP has no top-level agent.py",
    };
  }
  return {
    ok: true,
    files: files.map((entry) => taskFile(`${AGENT_DIRECTORY}/${entry.path}`, entry.data)),
    count: files.length,
    bytes: files.reduce((sum, entry) => sum + entry.data.length, 0),
  };
}
