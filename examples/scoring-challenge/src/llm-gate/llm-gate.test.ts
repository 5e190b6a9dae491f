import type { Sql } from "@platform/challenge-sdk";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type ChatServer,
  startChatServer,
  verdictArguments,
} from "../../test/chat-completions-server.js";
import { scoringDatabase } from "../../test/scoring-database.js";
import { createLlmGate, type LlmGateOptions } from "./llm-gate.js";
import { SYSTEM_PROMPT } from "./review-prompt.js";

const bundle = {
  codeHash: "a".repeat(64),
  files: [
    { path: "architecture.py", text: "def build_model(ctx):\n    return Model(ctx.vocab_size)\n" },
    {
      path: "training.py",
      text: "def train(ctx):\n    for batch in ctx.iter_train_batches(m):\n        step(batch)\n",
    },
  ],
};

const allow = {
  allow: true,
  reason: "A plain causal transformer and an AdamW loop.",
  violations: [],
  confidence: 0.93,
  rule_ids: [],
  evidence: [],
};
const deny = {
  allow: false,
  reason: "architecture.py embeds a 256x256 bigram table and loads it into the output bias.",
  violations: ["smuggled bigram statistics"],
  confidence: 0.97,
  rule_ids: ["smuggled_weights"],
  evidence: [
    {
      rule_id: "smuggled_weights",
      path: "architecture.py",
      line: 12,
      explanation: "TABLE = [[...]]",
    },
  ],
};

describe("the LLM gate against a chat-completions server", () => {
  let server: ChatServer;
  let options: LlmGateOptions;
  beforeAll(async () => {
    server = await startChatServer();
    options = {
      baseUrl: server.baseUrl,
      apiKey: server.apiKey,
      model: server.model,
      retryDelayMs: 10,
    };
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  it("allows on an allow verdict, asking exactly as the protocol says", async () => {
    server.script({ kind: "verdict", arguments: verdictArguments(allow) });
    const result = await createLlmGate(options).review(bundle);
    expect(result).toMatchObject({
      outcome: "allow",
      suspicious: false,
      cached: false,
      attempts: 1,
      verdict: allow,
    });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.authorization).toBe(`Bearer ${server.apiKey}`);
    expect(request!.body).toMatchObject({
      model: server.model,
      temperature: 0,
      tool_choice: { type: "function", function: { name: "submit_verdict" } },
    });
    expect(request!.body.max_tokens).toBeGreaterThanOrEqual(4096);
    expect(request!.body.messages[0]).toEqual({ role: "system", content: SYSTEM_PROMPT });
    expect(request!.body.messages[1]!.content).toContain(
      "# file: architecture.py\n1| def build_model(ctx):",
    );
    expect(request!.body.tools[0]!.function.parameters).toMatchObject({
      type: "object",
      required: expect.arrayContaining([
        "allow",
        "reason",
        "violations",
        "confidence",
        "rule_ids",
        "evidence",
      ]),
    });
  });

  it("denies on a deny verdict, with a message naming the rule and the place", async () => {
    server.script({ kind: "verdict", arguments: verdictArguments(deny) });
    const result = await createLlmGate(options).review(bundle);
    expect(result.outcome).toBe("deny");
    if (result.outcome !== "deny") return;
    expect(result.message).toBe(
      "rejected by the LLM review [smuggled_weights]: architecture.py embeds a 256x256 bigram table " +
        "and loads it into the output bias. — see architecture.py:12 (smuggled_weights)",
    );
  });

  it("never denies for a tokenizer concern alone: allowed and marked suspicious", async () => {
    server.script({
      kind: "verdict",
      arguments: verdictArguments({
        ...deny,
        reason: "The tokenizer merges bytes oddly.",
        rule_ids: ["tokenizer_concern"],
        evidence: [
          { rule_id: "tokenizer_concern", path: "training.py", line: 3, explanation: "odd merges" },
        ],
      }),
    });
    expect(await createLlmGate(options).review(bundle)).toMatchObject({
      outcome: "allow",
      suspicious: true,
    });
  });

  it.each([
    [
      "malformed arguments",
      { kind: "verdict", arguments: '{"allow": "yes", "reason": 3}' },
      /the verdict is malformed: .*\/allow: Expected boolean/,
    ],
    [
      "arguments that are not JSON",
      { kind: "verdict", arguments: '{"allow": true, "reason": "cut', finishReason: "length" },
      /not valid JSON \(cut short at the completion token limit\)/,
    ],
    [
      "a text answer instead of the tool call",
      { kind: "content", text: "Looks fine to me!" },
      /did not call submit_verdict \(finish_reason stop\)/,
    ],
    [
      "a body that is not JSON",
      { kind: "raw", status: 200, body: "<html>gateway</html>", contentType: "text/html" },
      /answer is not JSON: <html>gateway<\/html>/,
    ],
    [
      "a confidence out of range",
      { kind: "verdict", arguments: verdictArguments({ ...allow, confidence: 93 }) },
      /\/confidence: Expected number to be less or equal to 1/,
    ],
  ] as const)("holds on %s, after one retry, never allowing", async (_, reply, problem) => {
    server.script(reply);
    const result = await createLlmGate(options).review(bundle);
    expect(result.outcome).toBe("held");
    if (result.outcome !== "held") return;
    expect(result.message).toMatch(problem);
    expect(result.message).toMatch(/^held: the LLM review could not decide/);
    expect(result.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it("retries once after a 500 and takes the second answer", async () => {
    server.script(
      {
        kind: "raw",
        status: 500,
        body: JSON.stringify({ error: { message: "upstream overloaded" } }),
      },
      { kind: "verdict", arguments: verdictArguments(allow) },
    );
    expect(await createLlmGate(options).review(bundle)).toMatchObject({
      outcome: "allow",
      attempts: 2,
    });
    expect(server.requests).toHaveLength(2);
  });

  it("holds after two 500s, naming the provider's error", async () => {
    server.script({
      kind: "raw",
      status: 503,
      body: JSON.stringify({ error: { message: "upstream overloaded" } }),
    });
    const result = await createLlmGate(options).review(bundle);
    expect(result).toMatchObject({
      outcome: "held",
      message:
        "held: the LLM review could not decide (the LLM provider answered HTTP 503: upstream overloaded)",
    });
  });

  it("does not retry a refusal that will not change (a bad key)", async () => {
    server.script({ kind: "verdict", arguments: verdictArguments(allow) });
    const result = await createLlmGate({ ...options, apiKey: "sk-wrong" }).review(bundle);
    expect(result).toMatchObject({ outcome: "held", attempts: 1 });
    if (result.outcome === "held")
      expect(result.message).toContain("HTTP 401: Incorrect API key provided");
  });

  it("waits what a 429's Retry-After asks before its retry", async () => {
    const limited = JSON.stringify({ error: { message: "rate limit reached" } });
    server.script(
      { kind: "raw", status: 429, body: limited, headers: { "retry-after": "1" } },
      { kind: "verdict", arguments: verdictArguments(allow) },
    );
    expect(await createLlmGate(options).review(bundle)).toMatchObject({
      outcome: "allow",
      attempts: 2,
    });
    const [first, second] = server.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it("holds at once when Retry-After asks for longer than a review waits", async () => {
    server.script({
      kind: "raw",
      status: 429,
      body: JSON.stringify({ error: { message: "quota exhausted" } }),
      headers: { "retry-after": "3600" },
    });
    const result = await createLlmGate(options).review(bundle);
    expect(result).toMatchObject({
      outcome: "held",
      attempts: 1,
      message:
        "held: the LLM review could not decide (the LLM provider answered HTTP 429: quota exhausted)",
    });
    expect(server.requests).toHaveLength(1);
  });

  it("never puts the API key in what it reports, even when the provider echoes it", async () => {
    server.script({
      kind: "raw",
      status: 400,
      body: JSON.stringify({ error: { message: `bad request for key ${server.apiKey}` } }),
    });
    const result = await createLlmGate(options).review(bundle);
    expect(result).toMatchObject({ outcome: "held", attempts: 1 });
    expect(JSON.stringify(result)).not.toContain(server.apiKey);
  });

  it("holds when the provider does not answer in time (each attempt timed out)", async () => {
    server.script({ kind: "hang" });
    const started = Date.now();
    const result = await createLlmGate({ ...options, timeoutMs: 300 }).review(bundle);
    expect(result).toMatchObject({
      outcome: "held",
      attempts: 2,
      message:
        "held: the LLM review could not decide (the LLM provider did not answer within 0.3 s)",
    });
    // Two attempts of 0.3 s each, not a hang on the silent provider.
    expect(Date.now() - started).toBeLessThan(8 * 2 * 300);
    expect(server.requests).toHaveLength(2);
  });

  it("holds when the provider cannot be reached at all", async () => {
    const closed = await startChatServer();
    await closed.close();
    const result = await createLlmGate({ ...options, baseUrl: closed.baseUrl }).review(bundle);
    expect(result).toMatchObject({ outcome: "held", attempts: 2 });
    if (result.outcome === "held")
      expect(result.message).toMatch(/could not be reached: ECONNREFUSED/);
  });

  it("parses a long verdict (tens of KB), the kind a 512-token limit once cut", async () => {
    const evidence = Array.from({ length: 40 }, (_, i) => ({
      rule_id: "obfuscation",
      path: "architecture.py",
      line: i + 1,
      explanation: `Line ${i + 1} builds an attribute name from pieces: ${"x".repeat(400)}`,
    }));
    const long = {
      ...deny,
      reason: "r".repeat(6000),
      violations: evidence.map((item) => item.explanation),
      rule_ids: ["obfuscation", "smuggled_weights"],
      evidence,
    };
    const args = verdictArguments(long);
    expect(args.length).toBeGreaterThan(30_000);
    server.script({ kind: "verdict", arguments: args });
    const result = await createLlmGate(options).review(bundle);
    expect(result).toMatchObject({ outcome: "deny", verdict: long });
  });
});

describe.each(await testBackends())("the LLM gate's verdict cache on %s", (backend) => {
  let server: ChatServer;
  let db: Awaited<ReturnType<typeof scoringDatabase>>;
  let sql: Sql;
  let options: LlmGateOptions;
  beforeAll(async () => {
    server = await startChatServer();
    db = await scoringDatabase(backend);
    sql = db.sql;
    options = {
      baseUrl: server.baseUrl,
      apiKey: server.apiKey,
      model: server.model,
      retryDelayMs: 10,
      sql,
    };
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
  });
  beforeEach(async () => {
    server.requests.length = 0;
    await sql`delete from llm_verdicts`;
  });

  it("answers a second review of the same bundle from the cache, without a request", async () => {
    server.script({ kind: "verdict", arguments: verdictArguments(deny) });
    const gate = createLlmGate(options);
    const first = await gate.review(bundle);
    const second = await gate.review(bundle);
    expect(first).toMatchObject({ outcome: "deny", cached: false });
    expect(second).toMatchObject({
      outcome: "deny",
      cached: true,
      attempts: 0,
      verdict: deny,
      model: server.model,
    });
    expect(server.requests).toHaveLength(1);
    const rows = await sql`select code_hash, rules_revision, outcome from llm_verdicts`;
    expect(rows).toEqual([
      { code_hash: bundle.codeHash, rules_revision: gate.rulesRevision, outcome: "deny" },
    ]);
    // Another bundle, or other rules, are asked again.
    server.script({ kind: "verdict", arguments: verdictArguments(allow) });
    expect(await gate.review({ ...bundle, codeHash: "b".repeat(64) })).toMatchObject({
      outcome: "allow",
      cached: false,
    });
    const stricter = createLlmGate({
      ...options,
      limits: { maxFileChars: 1000, maxTotalChars: 2000 },
    });
    expect(await stricter.review(bundle)).toMatchObject({ outcome: "allow", cached: false });
    expect(server.requests).toHaveLength(3);
  });

  it("never caches a held outcome: the next review asks again", async () => {
    server.script(
      { kind: "raw", status: 500, body: "{}" },
      { kind: "raw", status: 500, body: "{}" },
      { kind: "verdict", arguments: verdictArguments(allow) },
    );
    const gate = createLlmGate(options);
    expect(await gate.review(bundle)).toMatchObject({ outcome: "held" });
    expect((await sql`select 1 from llm_verdicts`).length).toBe(0);
    expect(await gate.review(bundle)).toMatchObject({ outcome: "allow", cached: false });
    expect(await gate.review(bundle)).toMatchObject({ outcome: "allow", cached: true });
    expect(server.requests).toHaveLength(3);
  });
});
