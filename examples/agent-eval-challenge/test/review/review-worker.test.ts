// The reference review worker end to end: the service started on a real database and socket, a
// real agent ZIP submitted, prepared and deployed by its miner, then the worker run as the VM
// would run it (`node dist/review-worker.js`, and the worker image under Docker) with only its
// token and the challenge URL. The verdicts come out of the service's own verification of the
// attested report. One run adds a model: a local server speaking the OpenAI chat-completions
// wire protocol (a third-party service the tests cannot reach), which checks rule 18 from the
// outside: the request's sha256 was bound before the first connection reached it.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import {
  createMinerKey,
  type MinerKey,
  testBackends,
  writeZip,
} from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { ok, reviewCalls, sha256Hex } from "./review-test-kit.js";

const WORKER = fileURLToPath(new URL("../../dist/review-worker.js", import.meta.url));
const WORKER_IMAGE = "platform/agent-eval-worker:local";

const CLEAN_AGENT = {
  "agent.py": [
    "import json",
    "import os",
    "import urllib.request",
    "",
    "",
    "def solve(task: str) -> str:",
    "    request = urllib.request.Request(",
    "        os.environ['MODEL_BASE_URL'] + '/chat/completions',",
    "        data=json.dumps({'messages': [{'role': 'user', 'content': task}]}).encode(),",
    "        headers={'content-type': 'application/json'},",
    "    )",
    "    with urllib.request.urlopen(request) as answer:",
    "        return json.load(answer)['choices'][0]['message']['content']",
    "",
  ].join("\n"),
  "requirements.txt": "",
  "README.md": "A small agent: one model call per task.\n",
};

/** A real agent ZIP of `files` (deflated), unique per call by a comment line. */
function agentArchive(files: Record<string, string>): Buffer {
  const unique = `# build ${Math.random().toString(36).slice(2)}\n`;
  return writeZip(
    Object.entries(files).map(([name, data]) => ({
      name,
      data: name.endsWith(".py") ? unique + data : data,
    })),
  );
}

interface Prepared {
  id: number;
  assignmentId: string;
  token: string;
}

interface WorkerRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: Record<string, string>): Promise<WorkerRun> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, timeout: 180_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const [backend] = await testBackends();

describe(`the reference review worker (on ${backend})`, () => {
  let t: AgentEvalTest;
  let miner: MinerKey;
  beforeAll(async () => {
    if (!existsSync(WORKER)) {
      throw new Error(
        `${WORKER} is missing: build it first (npm run build -w @platform/agent-eval-challenge; CI builds before testing)`,
      );
    }
    // One miner submits every agent here: the submission window is not under test.
    t = await startAgentEval(backend!, { SUBMISSION_WINDOW_SECONDS: "0" });
    miner = await createMinerKey();
  }, 60_000);
  afterAll(() => t?.close());

  /** Submit `zip`, prepare its review (the one token delivery) and record its deployment. */
  async function submitAndDeploy(zip: Buffer): Promise<Prepared> {
    const submitted = await t.signedFetch("/submissions", {
      method: "POST",
      miner,
      json: { name: "agent", artifact_b64: zip.toString("base64") },
    });
    expect(submitted.status, await submitted.clone().text()).toBe(201);
    const { id } = (await submitted.json()) as { id: number };
    const prepared = await ok(await reviewCalls(t, miner).prepare(id));
    const token = prepared.secret_delivery!.token;
    const deployed = await t.signedFetch(`/submissions/${id}/review/deployed`, {
      method: "POST",
      miner,
      json: {
        assignment_id: prepared.assignment_id,
        vm_id: "test-vm-1",
        provider_receipt: "local test run",
        image_digest: `sha256:${sha256Hex("worker image")}`,
        compose_hash: sha256Hex("compose"),
      },
    });
    expect(deployed.status, await deployed.clone().text()).toBe(200);
    return { id, assignmentId: prepared.assignment_id, token };
  }

  const assignmentRow = async (assignmentId: string) => {
    const [row] = await t.sql<
      {
        state: string;
        model_call: { request_sha256: string; provider: string } | null;
        report_envelope: unknown;
      }[]
    >`select state, model_call, report_envelope from review_assignments where id = ${assignmentId}`;
    return row!;
  };

  /** The worker's run must end with the token dead and the assignment in `state`. */
  async function expectOutcome(prepared: Prepared, result: WorkerRun, state: string) {
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain("review-worker: report receipted");
    expect(result.stdout).not.toContain(prepared.token);
    expect(
      result.stdout
        .split("\n")
        .filter(Boolean)
        .every((line) => line.startsWith("review-worker: ")),
    ).toBe(true);
    const row = await assignmentRow(prepared.assignmentId);
    expect(row.state).toBe(state);
    expect(row.report_envelope).not.toBeNull();
    // What the worker measured into RTMR3, in order, and the findings document it attached.
    const envelope = row.report_envelope as {
      attestation: { event_log: { imr: number; event: string }[] };
      review_core: { evidence: { name: string; media_type: string }[] };
    };
    expect(envelope.attestation.event_log.map(({ imr, event }) => `${imr}:${event}`)).toEqual([
      "3:reviewer-version",
      "3:rules-revision",
      "3:artifact-sha256",
      "3:model-request-sha256",
    ]);
    expect(envelope.review_core.evidence[0]).toMatchObject({
      name: "review-findings.json",
      media_type: "application/json",
    });
    const after = await t.fetch(`/review/v1/assignments/${prepared.assignmentId}`, {
      headers: { authorization: `Bearer ${prepared.token}` },
    });
    expect(after.status).toBe(401);
  }

  const runWorker = (prepared: Prepared, env: Record<string, string> = {}) =>
    run(process.execPath, [WORKER], {
      REVIEW_SESSION_TOKEN: prepared.token,
      CHALLENGE_URL: t.url,
      ...env,
    });

  it.each<[string, string, Record<string, string>]>([
    ["a clean Python agent", "allowed", CLEAN_AGENT],
    [
      "an agent that opens a raw socket",
      "rejected",
      { ...CLEAN_AGENT, "net.py": "import socket\n\nconn = socket.socket()\n" },
    ],
    [
      "an agent with a hard-coded URL",
      "escalated",
      { ...CLEAN_AGENT, "endpoints.py": "FALLBACK = 'https://example.com/v1'\n" },
    ],
  ])(
    "reviews %s: the assignment ends %s",
    async (_, state, files) => {
      const prepared = await submitAndDeploy(agentArchive(files));
      const result = await runWorker(prepared);
      await expectOutcome(prepared, result, state);
    },
    60_000,
  );

  it("exits 1 with a bad environment, naming the variable and never its value", async () => {
    const result = await run(process.execPath, [WORKER], {
      REVIEW_SESSION_TOKEN: "not-a-token.secret-part",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("REVIEW_SESSION_TOKEN is not an assignment token");
    expect(result.stdout).toContain("CHALLENGE_URL is required");
    expect(result.stdout).not.toContain("secret-part");
  });

  describe("with a model", () => {
    let server: Server;
    let baseUrl: string;
    const seen: {
      connectedAt: number[];
      boundAtConnection: Promise<unknown>[];
      bodies: Buffer[];
      authorizations: string[];
    } = {
      connectedAt: [],
      boundAtConnection: [],
      bodies: [],
      authorizations: [],
    };
    let watchedAssignment = "";
    beforeAll(async () => {
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
          seen.bodies.push(Buffer.concat(chunks));
          seen.authorizations.push(request.headers.authorization ?? "");
          if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
            response.writeHead(404).end();
            return;
          }
          const content =
            '```json\n{"verdict": "escalate", "reasons": ["asks for a second look"]}\n```';
          response.writeHead(200, { "content-type": "application/json" }).end(
            JSON.stringify({
              id: "chatcmpl-1",
              object: "chat.completion",
              created: 0,
              model: "reviewer-1",
              choices: [
                { index: 0, message: { role: "assistant", content }, finish_reason: "stop" },
              ],
              usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            }),
          );
        });
      });
      // When a connection arrives, and what the database holds for the assignment then.
      server.on("connection", () => {
        seen.connectedAt.push(Date.now());
        seen.boundAtConnection.push(
          t.sql<{ model_call: unknown }[]>`
            select model_call from review_assignments where id = ${watchedAssignment}`.then(
            ([row]) => row?.model_call ?? null,
          ),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

    it("binds the request's exact bytes before connecting, and a model escalate tightens an allow", async () => {
      const prepared = await submitAndDeploy(agentArchive(CLEAN_AGENT));
      watchedAssignment = prepared.assignmentId;
      const result = await runWorker(prepared, {
        MODEL_BASE_URL: baseUrl,
        MODEL_API_KEY: "sk-test-key",
        MODEL_NAME: "reviewer-1",
      });
      await expectOutcome(prepared, result, "escalated");
      expect(result.stdout).not.toContain("sk-test-key");

      expect(seen.bodies).toHaveLength(1);
      expect(seen.authorizations).toEqual(["Bearer sk-test-key"]);
      const row = await assignmentRow(prepared.assignmentId);
      expect(row.model_call).toMatchObject({
        provider: "openai-compatible",
        model: "reviewer-1",
        endpoint_host: "127.0.0.1",
      });
      // The bytes the model received are the bytes bound by model-call-started...
      expect(createHash("sha256").update(seen.bodies[0]!).digest("hex")).toBe(
        row.model_call!.request_sha256,
      );
      // ... and the binding was in the database when the first connection arrived.
      const atConnection = await Promise.all(seen.boundAtConnection);
      expect(atConnection.length).toBeGreaterThan(0);
      expect(atConnection[0]).toEqual(row.model_call);
      const [bound] = await t.sql<{ model_call_at: Date }[]>`
        select model_call_at from review_assignments where id = ${prepared.assignmentId}`;
      expect(bound!.model_call_at.getTime()).toBeLessThanOrEqual(seen.connectedAt[0]!);
      const request = JSON.parse(seen.bodies[0]!.toString("utf8")) as {
        model: string;
        messages: { content: string }[];
      };
      expect(request.model).toBe("reviewer-1");
      expect(request.messages[1]!.content).toContain("agent.py");
    }, 60_000);

    it("records model_unavailable and exits 1 when the model does not answer", async () => {
      const prepared = await submitAndDeploy(agentArchive(CLEAN_AGENT));
      const result = await runWorker(prepared, {
        MODEL_BASE_URL: `${baseUrl}/missing`,
        MODEL_NAME: "reviewer-1",
      });
      expect(result.code, result.stdout).toBe(1);
      expect(result.stdout).toContain("failed (model_unavailable)");
      const [row] = await t.sql<{ state: string; failure: { reason_code: string } | null }[]>`
        select state, failure from review_assignments where id = ${prepared.assignmentId}`;
      expect(row).toMatchObject({ state: "error", failure: { reason_code: "model_unavailable" } });
    }, 60_000);
  });

  it("runs from its image (docker run --network host), as a review VM would", async () => {
    const inspected = await run(
      "docker",
      ["image", "inspect", "--format", "{{.Id}}", WORKER_IMAGE],
      {},
    );
    if (inspected.code !== 0) {
      throw new Error(
        `the image ${WORKER_IMAGE} is missing: build it with ` +
          "`npm run build -w @platform/agent-eval-challenge && bash examples/agent-eval-challenge/worker-image/build.sh` (CI builds it)",
      );
    }
    const prepared = await submitAndDeploy(agentArchive(CLEAN_AGENT));
    const result = await run(
      "docker",
      [
        "run",
        "--rm",
        "--network",
        "host",
        "-e",
        "REVIEW_SESSION_TOKEN",
        "-e",
        "CHALLENGE_URL",
        WORKER_IMAGE,
      ],
      { REVIEW_SESSION_TOKEN: prepared.token, CHALLENGE_URL: t.url },
    );
    await expectOutcome(prepared, result, "allowed");
  }, 180_000);
});
