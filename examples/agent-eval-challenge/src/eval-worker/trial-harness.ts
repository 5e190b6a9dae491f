/**
 * The trial harness: a small Python program the worker places at /workspace/harness.py (read-only,
 * root-owned) beside the agent. It runs `python3 /agent/agent.py`, passes on at most a cap of
 * each of the agent's streams (so a flooding agent cannot push its own answer out of the kept
 * output), then prints the agent's TASK_OUTPUT file base64-encoded on lines tagged with the
 * trial's marker. The task runner returns only stdout and stderr, so this is how the output is
 * copied out; the checker then runs in the worker, never in the container.
 *
 * An agent can read the marker (it is in the harness's command line) and print lines that look
 * like a frame: that gains it nothing, since the output is whatever the agent chooses anyway.
 * What it cannot reach is the checker and the expected answers, which never enter the container.
 */

/** Bytes of each agent stream passed on (the rest is read and dropped). */
export const AGENT_STREAM_CAP = 64 * 1024;
/** Bytes of TASK_OUTPUT copied out; a larger output is refused (scores 0). */
export const AGENT_OUTPUT_CAP = 256 * 1024;
/** Base64 characters per frame line (the runner splits output into lines of at most 64 KiB). */
const FRAME_LINE_CHARS = 4096;

export const HARNESS_PATH = "harness.py";
export const AGENT_DIRECTORY = "agent";
export const INPUT_PATH = "task/input";
/** Where the agent writes (the container's one writable place is its /tmp tmpfs). */
export const OUTPUT_FILE = "/tmp/output";

export const HARNESS_SOURCE = `"""The eval worker's trial harness (not the agent's): runs the agent, relays a capped part of its
streams, then prints its output file framed by the trial's marker."""
import base64
import os
import subprocess
import sys
import threading

marker, stream_cap, output_cap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
output_path = os.environ["TASK_OUTPUT"]
lock = threading.Lock()


def relay(source, sink):
    left = stream_cap
    while True:
        chunk = os.read(source, 65536)
        if not chunk:
            break
        if left > 0:
            kept = chunk[:left]
            left -= len(kept)
            with lock:
                sink.write(kept)
                sink.flush()
    os.close(source)


agent = subprocess.Popen(
    [sys.executable, "/agent/agent.py"],
    stdin=subprocess.DEVNULL,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    cwd="/tmp",
)
relays = [
    threading.Thread(target=relay, args=(os.dup(agent.stdout.fileno()), sys.stdout.buffer), daemon=True),
    threading.Thread(target=relay, args=(os.dup(agent.stderr.fileno()), sys.stderr.buffer), daemon=True),
]
agent.stdout.close()
agent.stderr.close()
for thread in relays:
    thread.start()
code = agent.wait()
for thread in relays:
    # A child the agent left behind may hold its pipes open: do not wait for it.
    thread.join(timeout=1)

try:
    with open(output_path, "rb") as source:
        data = source.read(output_cap + 1)
    status = "too_large" if len(data) > output_cap else "ok"
except OSError:
    data, status = b"", "missing"
encoded = base64.b64encode(data[:output_cap]).decode("ascii") if status == "ok" else ""
with lock:
    out = sys.stdout
    out.write(f"\\n{marker} begin\\n")
    for start in range(0, len(encoded), ${FRAME_LINE_CHARS}):
        out.write(f"{marker} data {encoded[start:start + ${FRAME_LINE_CHARS}]}\\n")
    out.write(f"{marker} end {status} {code}\\n")
    out.flush()
`;

/** What the frame of `marker` in a trial's stdout says, and the stdout without it. */
export interface FramedOutput {
  /** The output file's bytes; null when it was missing, too large, or no frame ended. */
  output: Buffer | null;
  /** ok | missing | too_large | no_frame. */
  status: string;
  /** The agent's exit code as the harness saw it (null without a frame). */
  agentExitCode: number | null;
  /** stdout's lines other than the frame's. */
  lines: string[];
}

/** Read the last complete frame of `marker` out of `stdout`. */
export function readFramedOutput(stdout: string, marker: string): FramedOutput {
  const lines: string[] = [];
  let data: string[] = [];
  let ended: { status: string; code: number | null; data: string[] } | null = null;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith(`${marker} `)) {
      lines.push(line);
      continue;
    }
    const rest = line.slice(marker.length + 1);
    if (rest === "begin") {
      // Only the harness's own frame counts: data lines printed before it are dropped.
      data = [];
    } else if (rest.startsWith("data ")) {
      data.push(rest.slice(5));
    } else if (rest.startsWith("end ")) {
      const [status = "", code = ""] = rest.slice(4).split(" ");
      ended = { status, code: /^-?\d+$/.test(code) ? Number(code) : null, data };
      data = [];
    }
  }
  // The harness starts its frame with a newline of its own: not a line of the agent's.
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (ended === null) return { output: null, status: "no_frame", agentExitCode: null, lines };
  const encoded = ended.data.join("");
  const output = ended.status === "ok" ? Buffer.from(encoded, "base64") : null;
  return { output, status: ended.status, agentExitCode: ended.code, lines };
}
