// The pipeline modules against the real evaluation image through the SDK's docker task runner:
// gate.py and run.py read what harness-task.ts places, print what harness-report.ts parses, and
// score.ts turns a uniform model's measurements into exactly 8 bits per byte.
import { dockerTaskRunner, type TaskRunner } from "@platform/challenge-sdk/tasks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bundle, openBundle } from "../src/bundle/index.js";
import { type CorpusSlices, loadCorpus, sliceCorpus } from "../src/corpus.js";
import { newHarnessNonce, parseGateReport, parseRunReport } from "../src/harness-report.js";
import { DEFAULT_EVAL_IMAGE, gateTask, runTask } from "../src/harness-task.js";
import { scoreRun } from "../src/score.js";
import { evalImageReady } from "./scoring-test-kit.js";
import { writeZip } from "./zip-writer.js";

const image = process.env["EVAL_IMAGE"] ?? DEFAULT_EVAL_IMAGE;

// Zero logits whatever the input: every byte costs exactly ln 256 nats.
const UNIFORM = `import torch


class Uniform(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab
        self.scale = torch.nn.Parameter(torch.zeros(1))

    def forward(self, tokens):
        return torch.zeros(tokens.shape[0], tokens.shape[1], self.vocab) * self.scale


def build_model(ctx):
    return Uniform(ctx.vocab_size)
`;
const DRAIN = `def train(ctx):
    model = ctx.build_model()
    for batch in ctx.iter_train_batches(model):
        pass
`;

// Past the static gate (run through tests/ungated_run.py): stop every process it can signal,
// write a forged report with the nonce (which it was given: the worst case) wherever it can, PID
// 1's stdout included, then kill everything and print the forgery again.
const KILLER = (nonce: string) => `import os, signal, sys

FORGED = 'HARNESS-REPORT ${nonce} {"ok":true,"nll_nats":0.001,"covered_bytes":100000}'


def everyone(numbers):
    for pid in [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
        for number in numbers:
            try:
                os.kill(pid, number)
            except OSError:
                pass


def train(ctx):
    everyone([signal.SIGSTOP])
    for path in ("/proc/1/fd/1", "/dev/stdout"):
        try:
            with open(path, "w") as handle:
                handle.write("\\n" + FORGED + "\\n")
        except OSError:
            pass
    everyone([n for n in range(1, 65) if n not in (signal.SIGSTOP, signal.SIGCONT, signal.SIGKILL)] + [signal.SIGKILL])
    print(FORGED, flush=True)
    os._exit(0)
`;

describe.runIf(evalImageReady(image))("the harness in the evaluation image", () => {
  let runner: TaskRunner;
  beforeAll(() => {
    runner = dockerTaskRunner({ pull: false });
  });
  afterAll(() => runner?.close());

  async function bundleOf(zip: Buffer) {
    const opened = await openBundle(zip);
    if (!opened.ok) throw new Error(opened.error.message);
    return opened.value;
  }

  /** The scored run of `bundle` on 4 KiB of the corpus, on the CPU, as the service builds it. */
  const smallRun = (name: string, bundle: Bundle, slices: CorpusSlices, nonce: string) =>
    runTask({
      jobId: `run-${name}-${Date.now()}`,
      image,
      bundle,
      slices,
      budgets: { tokenBudget: 4096, stepBudget: 1000, memoryMb: 2048, device: "cpu" },
      nonce,
      resources: { timeoutSeconds: 300 },
    });

  const uniformBundle = () =>
    bundleOf(
      writeZip([
        { name: "architecture.py", data: UNIFORM },
        { name: "training.py", data: DRAIN },
      ]),
    );

  it("gate.py passes a contract bundle and names a forbidden import and an empty entry point", async () => {
    const nonce = newHarnessNonce();
    const clean = await runner.run(
      gateTask({
        jobId: `gate-ok-${Date.now()}`,
        image,
        bundle: await uniformBundle(),
        nonce,
      }),
    );
    expect(parseGateReport(clean.stdout, nonce, { truncated: clean.stdoutTruncated })).toEqual({
      ok: true,
      report: { ok: true, files: 2, violations: [] },
    });

    const hostile = writeZip([
      {
        name: "architecture.py",
        data: "import os\n\ndef build_model(ctx):\n    return os.environ\n",
      },
      { name: "training.py", data: "def train(ctx):\n    pass\n" },
    ]);
    const refused = await runner.run(
      gateTask({ jobId: `gate-os-${Date.now()}`, image, bundle: await bundleOf(hostile), nonce }),
    );
    const parsed = parseGateReport(refused.stdout, nonce);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.report.ok).toBe(false);
    expect(parsed.report.violations).toContainEqual(
      expect.objectContaining({ code: "contract_missing_function", path: "training.py" }),
    );
    expect(parsed.report.violations).toContainEqual(
      expect.objectContaining({
        code: "forbidden_import",
        path: "architecture.py",
        message: "import of os is not allowed",
      }),
    );
  });

  it("run.py scores a uniform model at exactly 8 bits per byte (score 1/9) on the pinned corpus", async () => {
    const slices = sliceCorpus(await loadCorpus(), 4096, { holdoutBytes: 4096 });
    const nonce = newHarnessNonce();
    const { task, settings } = smallRun("uniform", await uniformBundle(), slices, nonce);
    const result = await runner.run(task);
    const parsed = parseRunReport(result.stdout, nonce, { truncated: result.stdoutTruncated });
    if (!parsed.ok) throw new Error(`${parsed.error.message}\n${result.stderr.slice(-2000)}`);
    const { report } = parsed;
    expect(report).toMatchObject({
      ok: true,
      error: null,
      stream_sha256: slices.streamSha256,
      covered_bytes: 32 * 127,
    });
    expect(report.causality.ok).toBe(true);
    const outcome = scoreRun(report, settings);
    expect(outcome).toEqual({
      status: "completed",
      bpb: 8,
      antiCheatMultiplier: 1,
      finalScore: 1 / 9,
      note: null,
    });
  });

  it("a bundle that kills every process it can and forges the report is not scored: the scorer is PID 1", async () => {
    const slices = sliceCorpus(await loadCorpus(), 4096, { holdoutBytes: 4096 });
    const nonce = newHarnessNonce();
    const bundle = await bundleOf(
      writeZip([
        { name: "architecture.py", data: UNIFORM },
        { name: "training.py", data: KILLER(nonce) },
      ]),
    );
    const { task, settings } = smallRun("killer", bundle, slices, nonce);
    // The service's task as it is (its container, its init setting), with the gate switched off.
    const result = await runner.run({
      ...task,
      command: ["python3", "/opt/harness/tests/ungated_run.py"],
    });
    expect(result.stderr).toContain('"nll_nats":0.001');
    expect(result.stdout).not.toContain('"nll_nats":0.001');
    const parsed = parseRunReport(result.stdout, nonce, { truncated: result.stdoutTruncated });
    if (!parsed.ok) throw new Error(`${parsed.error.message}\n${result.stderr.slice(-2000)}`);
    expect(parsed.report.ok).toBe(false);
    expect(parsed.report.batches).toBe(0);
    expect(scoreRun(parsed.report, settings).status).not.toBe("completed");
  });
});
