// One trial in a real container of the agent image (agent-image/build.sh), through the SDK's
// Docker task runner: the good agent's output is copied out and passes the checker run here; the
// escape agent finds no token and no network (a real server listening on the host sees no
// connection) and scores 0; a silent agent is killed at the trial's deadline; a flooding agent
// cannot push its answer out of the kept output; the container runs as a non-root user with a
// read-only agent. Needs the image and a Docker engine (CI builds the image).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerTaskRunner } from "@platform/challenge-sdk/tasks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentTaskFiles } from "../../src/eval-worker/agent-files.js";
import {
  MAX_EVENT_LINE_CHARS,
  MAX_EVENT_LINES,
  reportedLines,
  runTrial,
} from "../../src/eval-worker/run-trial.js";
import { readFramedOutput } from "../../src/eval-worker/trial-harness.js";
import {
  AGENT_IMAGE,
  AGENTS_DIR,
  type AgentName,
  agentArchive,
  agentFiles,
  referenceInstance,
} from "./eval-worker-kit.js";

const runner = dockerTaskRunner({ pull: false });
let jobs = 0;

async function trial(
  files: Record<string, Buffer | string>,
  taskId: string,
  options: { minerEnv?: Record<string, string>; timeoutSeconds?: number } = {},
) {
  jobs += 1;
  const agent = await agentTaskFiles(agentArchive(files));
  if (!agent.ok) throw new Error(agent.message);
  const instance = referenceInstance(taskId);
  const run = await runTrial({
    runner,
    image: AGENT_IMAGE,
    jobId: `eval-worker-test-${process.pid}-${jobs}`,
    task: instance.task,
    agentFiles: agent.files,
    minerEnv: options.minerEnv ?? {},
    timeoutSeconds: options.timeoutSeconds ?? 30,
  });
  const score = run.output === null ? 0 : instance.check(run.output);
  return { run, score, input: instance.task.input };
}

const reference = (name: AgentName) => agentFiles(name);

describe("a trial in the agent image", () => {
  beforeAll(async () => {
    const inspected = await new Promise<number>((resolve) =>
      execFile("docker", ["image", "inspect", AGENT_IMAGE], (error) => resolve(error ? 1 : 0)),
    );
    if (inspected !== 0) {
      throw new Error(
        `the image ${AGENT_IMAGE} is missing: build it with ` +
          "`bash examples/agent-eval-challenge/agent-image/build.sh` (CI builds it)",
      );
    }
  });
  afterAll(() => runner.close());

  it("copies the good agent's output out; the checker here passes it", async () => {
    const { run, score, input } = await trial(reference("good"), "csv-to-json");
    expect(run.outputStatus).toBe("ok");
    expect(run.agentExitCode).toBe(0);
    expect(score).toBe(1);
    expect(run.lines).toContainEqual({
      stream: "stdout",
      message: `solving csv-to-json (${input.length} characters of input)`,
    });
    // The frame is the worker's, not a line of the agent's.
    expect(run.lines.some((line) => line.message.includes("@@agent-eval-output-"))).toBe(false);
  }, 60_000);

  it("scores the half agent's wrong answer 0 and its right one 1", async () => {
    expect((await trial(reference("half"), "sum-column")).score).toBe(0);
    expect((await trial(reference("half"), "uppercase")).score).toBe(1);
  }, 60_000);

  describe("the escape agent", () => {
    let server: Server;
    const connections: string[] = [];
    beforeAll(async () => {
      server = createServer((request, response) => {
        connections.push(`${request.method} ${request.url}`);
        response.end("reached");
      });
      server.on("connection", () => connections.push("connection"));
      await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
    });
    afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

    it("finds no token and no network, and scores 0", async () => {
      const port = (server.address() as AddressInfo).port;
      // The worker's own process holds the token: nothing of it may reach the container.
      process.env.EVAL_RUN_TOKEN = "run-id.secret-run-token-value";
      try {
        const { run, score } = await trial(reference("escape"), "uppercase", {
          minerEnv: {
            CHALLENGE_URL: `http://172.17.0.1:${port}`,
            // A miner cannot smuggle names the worker owns.
            EVAL_RUN_TOKEN: "miner-value",
            TASK_OUTPUT: "/workspace/agent/agent.py",
          },
        });
        expect(run.outputStatus).toBe("ok");
        expect(score).toBe(0);
        const output = run.output!.toString("utf8");
        expect(output).not.toContain("secret-run-token-value");
        expect(output).not.toContain("miner-value");
        const report = JSON.parse(output) as {
          secrets: Record<string, unknown>;
          network: Record<string, string>;
        };
        expect(report.secrets.EVAL_RUN_TOKEN).toBeNull();
        expect(report.secrets.TELEMETRY_GRANT).toBeNull();
        expect(String(report.secrets["/proc/1/environ"])).toContain("TASK_ID=uppercase");
        expect(Object.keys(report.network).length).toBeGreaterThanOrEqual(5);
        for (const [attempt, outcome] of Object.entries(report.network)) {
          expect(outcome, attempt).toMatch(/^refused: /);
        }
        expect(connections).toEqual([]);
      } finally {
        delete process.env.EVAL_RUN_TOKEN;
      }
    }, 60_000);

    it("(control) the same agent outside a container does reach the server", async () => {
      const port = (server.address() as AddressInfo).port;
      const dir = mkdtempSync(join(tmpdir(), "escape-control-"));
      try {
        await new Promise<void>((resolve, reject) =>
          execFile(
            "python3",
            [join(AGENTS_DIR, "escape", "agent.py")],
            {
              env: {
                PATH: process.env.PATH ?? "/usr/bin:/bin",
                CHALLENGE_URL: `http://127.0.0.1:${port}`,
                TASK_OUTPUT: join(dir, "output"),
              },
              timeout: 30_000,
            },
            (error) => (error ? reject(error) : resolve()),
          ),
        );
        const report = JSON.parse(readFileSync(join(dir, "output"), "utf8")) as {
          network: Record<string, string>;
        };
        expect(report.network[`connect 127.0.0.1:${port}`]).toBe("connected");
        expect(connections).toContain("connection");
      } finally {
        rmSync(dir, { recursive: true, force: true });
        connections.length = 0;
      }
    }, 60_000);
  });

  it("passes the miner's env values to the agent and blanks them out of its reported lines", async () => {
    const printer = [
      "import os",
      "key = os.environ['MINER_API_KEY']",
      "print('my key is', key)",
      "open(os.environ['TASK_OUTPUT'], 'w').write(key)",
    ].join("\n");
    const { run } = await trial({ "agent.py": printer }, "uppercase", {
      minerEnv: { MINER_API_KEY: "sk-live-0123456789" },
    });
    expect(run.output!.toString("utf8")).toBe("sk-live-0123456789");
    expect(run.lines).toContainEqual({ stream: "stdout", message: "my key is [REDACTED]" });
    expect(JSON.stringify(run.lines)).not.toContain("sk-live-0123456789");
  }, 60_000);

  it("kills a silent agent at the trial's deadline: no output, score 0", async () => {
    const started = Date.now();
    const { run, score } = await trial(
      { "agent.py": "import time\nprint('thinking', flush=True)\ntime.sleep(600)\n" },
      "uppercase",
      { timeoutSeconds: 3 },
    );
    expect(run.timedOut).toBe(true);
    expect(run.outputStatus).toBe("timed_out");
    expect(run.output).toBeNull();
    expect(score).toBe(0);
    // Killed at its 3 s deadline, not after the 600 s the agent sleeps.
    expect(Date.now() - started).toBeLessThan(600_000 / 20);
  }, 60_000);

  it("keeps the answer of an agent that floods its streams (they are capped, the output is not)", async () => {
    const flood = [
      "import os, sys",
      "sys.stdout.write('x' * 8_000_000)",
      "sys.stderr.write('y\\n' * 1_000_000)",
      "text = open(os.environ['TASK_INPUT']).read()",
      "open(os.environ['TASK_OUTPUT'], 'w').write(text.upper())",
    ].join("\n");
    const { run, score } = await trial({ "agent.py": flood }, "uppercase");
    expect(run.outputStatus).toBe("ok");
    expect(score).toBe(1);
    expect(run.lines.length).toBeLessThanOrEqual(400);
  }, 60_000);

  it("runs the agent as a non-root user, its files and the input read-only", async () => {
    const probe = [
      "import json, os",
      "report = {'uid': os.getuid()}",
      "for path in ('/agent/agent.py', os.environ['TASK_INPUT'], '/etc/passwd'):",
      "    try:",
      "        open(path, 'a').write('x')",
      "        report[path] = 'written'",
      "    except OSError as error:",
      "        report[path] = type(error).__name__",
      "open(os.environ['TASK_OUTPUT'], 'w').write(json.dumps(report))",
    ].join("\n");
    const { run } = await trial({ "agent.py": probe }, "uppercase");
    const report = JSON.parse(run.output!.toString("utf8")) as Record<string, unknown>;
    expect(report.uid).not.toBe(0);
    expect(Object.values(report).filter((value) => value === "written")).toEqual([]);
  }, 60_000);
});

describe("the reported lines", () => {
  const value = "Q7f3a9c2e41b8d6Z-miner-key";
  const stdout = (message: string) => ({ stream: "stdout" as const, message });

  it("redacts a line before cutting it: a value across the 2,048-character cut leaves no piece", () => {
    const line = `${"x".repeat(MAX_EVENT_LINE_CHARS - 8)}${value} and more`;
    const [reported] = reportedLines([stdout(line)], [value]);
    expect(reported!.message).toHaveLength(MAX_EVENT_LINE_CHARS);
    expect(reported!.message).not.toContain(value.slice(0, 4));
    expect(reported!.message.startsWith("x".repeat(MAX_EVENT_LINE_CHARS - 8))).toBe(true);
  });

  it("redacts a line before cutting it: 3 characters of a value before the cut leave no piece", () => {
    // 3 characters are under the cut-edge pass's 4: only redacting the whole line first hides them.
    const line = `${"x".repeat(MAX_EVENT_LINE_CHARS - 3)}${value} and more`;
    const [reported] = reportedLines([stdout(line)], [value]);
    expect(reported!.message).toBe(`${"x".repeat(MAX_EVENT_LINE_CHARS - 3)}[RE`);
    expect(reported!.message).not.toContain(value.slice(0, 3));
  });

  it("redacts the start of a value the container's stream cap cut off, and encoded values", () => {
    const lines = reportedLines(
      [
        stdout(`last line before the cap: ${value.slice(0, 11)}`),
        stdout(`${value.slice(-9)} (the rest of a line split in two)`),
        stdout(`base64 ${Buffer.from(`user:${value}`).toString("base64")}`),
        stdout(`hex ${Buffer.from(value).toString("hex")}`),
        { stream: "stderr", message: `reversed ${[...value].reverse().join("")}` },
      ],
      [value],
    );
    expect(lines.map((line) => line.message)).toEqual([
      "last line before the cap: [REDACTED]",
      "[REDACTED] (the rest of a line split in two)",
      expect.stringMatching(/^base64 \S*\[REDACTED\]\S*$/),
      "hex [REDACTED]",
      "reversed [REDACTED]",
    ]);
    expect(lines[4]!.stream).toBe("stderr");
  });

  it("keeps at most 400 lines", () => {
    const many = Array.from({ length: MAX_EVENT_LINES + 5 }, (_, i) => stdout(`line ${i}`));
    expect(reportedLines(many, [])).toHaveLength(MAX_EVENT_LINES);
  });
});

describe("the harness's frame", () => {
  const marker = "@@agent-eval-output-0123@@";
  it("reads the output and leaves the agent's lines", () => {
    const stdout = `hello\nworld\n\n${marker} begin\n${marker} data aGVs\n${marker} data bG8=\n${marker} end ok 0\n`;
    expect(readFramedOutput(stdout, marker)).toEqual({
      output: Buffer.from("hello"),
      status: "ok",
      agentExitCode: 0,
      lines: ["hello", "world"],
    });
  });

  it("has no output without a complete frame, or for a missing or too large file", () => {
    expect(readFramedOutput(`x\n${marker} data aGVs\n`, marker).status).toBe("no_frame");
    expect(readFramedOutput(`x\n${marker} data aGVs\n`, marker).output).toBeNull();
    expect(readFramedOutput(`${marker} end missing 1\n`, marker)).toMatchObject({
      output: null,
      status: "missing",
      agentExitCode: 1,
    });
    expect(readFramedOutput(`${marker} end too_large 0\n`, marker).output).toBeNull();
  });

  it("drops data lines printed before the harness's frame begins", () => {
    const stdout = `${marker} data ZXZpbA==\n${marker} begin\n${marker} data aGVs\n${marker} end ok 0\n`;
    expect(readFramedOutput(stdout, marker).output).toEqual(Buffer.from("hel"));
  });

  it("ignores another trial's marker", () => {
    const other = "@@agent-eval-output-9999@@";
    const framed = readFramedOutput(`${other} data aGVs\n${other} end ok 0\n`, marker);
    expect(framed.status).toBe("no_frame");
    expect(framed.lines).toHaveLength(2);
  });
});
