// The redaction of log lines (rule 21): each secret kind goes, ordinary text stays, and every
// pass stays linear: 64 KiB adversarial lines (built to make a backtracking pattern rescan)
// through every pattern, the generic name=value scan and the whole redaction, each within 50 ms.
import { describe, expect, it } from "vitest";
import {
  isScoreShapedKey,
  MIN_ENV_VALUE_LENGTH,
  publicPayload,
  REDACTED,
  redactNamedSecrets,
  redactSecrets,
  SECRET_PATTERNS,
} from "../../src/live/redaction.js";

const KIB64 = 64 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(KIB64 / unit.length)).slice(0, KIB64);

/** Lines built against each pattern: prefixes repeated, runs that almost match, long gaps. */
const ADVERSARIAL: [string, string][] = [
  ["sk- repeated", fill("sk-")],
  ["sk- and 15 key characters", fill("sk-aaaaaaaaaaaaaaa!")],
  ["AKIA repeated", fill("AKIA")],
  ["AKIA and 15 characters", fill("AKIAAAAAAAAAAAAAAAA ")],
  ["ghp_ repeated", fill("ghp_")],
  ["github_pat_ repeated", fill("github_pat_")],
  ["xoxb- repeated", fill("xoxb-")],
  ["AIza repeated", fill("AIza")],
  ["eyJ repeated", fill("eyJ")],
  ["eyJ runs without a second part", fill("eyJaaaaaaaaaaaaaaaa.")],
  ["one long key run", fill("a")],
  ["64-character ids without a MAC", fill(`${"a".repeat(64)}.`)],
  ["ids and short MACs", fill(`${"a".repeat(20)}.${"b".repeat(42)} `)],
  ["authorization without a separator", `authorization${" ".repeat(KIB64 - 14)}x`],
  ["authorization repeated", fill("authorization")],
  ["authorization: repeated", fill("authorization: '")],
  ["bearer repeated", fill("bearer ")],
  ["bearer and long blanks", `bearer${"\t".repeat(KIB64 - 6)}`],
  ["URL credential prefixes", fill("://a:")],
  ["URL credentials without @", fill(`://${"u".repeat(100)}:${"p".repeat(100)}/`)],
  ["private key headers", fill("-----BEGIN PRIVATE KEY-----")],
  ["private key header prefixes", fill("-----BEGIN AAAAAAAAAAAAAAAAAAAA ")],
  ["separators only", fill("=")],
  ["colons only", fill(":")],
  ["short pairs", fill("a=")],
  ["secret names without values", fill("api_key=")],
  ["secret names with short values", fill("token=abc ")],
  ["long names", fill(`${"k".repeat(63)}=`)],
  ["quoted gaps", fill(`"password" : " `)],
  ["values made of separators", `token=${"=".repeat(KIB64 - 6)}`],
  ["mixed", fill("sk-AKIAghp_eyJ.authorization:bearer ://-----BEGIN token=")],
];

/**
 * ms for `run`: the best of three after a warmup run (JIT and regexp compilation are not the
 * pass's cost, and a test worker sharing the cores with others should not fail a linear pass;
 * a quadratic one takes seconds on these lines, every time).
 */
function timed(run: () => unknown): number {
  run();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe("redaction of log lines", () => {
  it.each([
    ["an OpenAI key", "key sk-proj-AbCdEf0123456789GhIjKl end", "sk-proj-AbCdEf0123456789GhIjKl"],
    ["an Anthropic key", "sk-ant-api03-ZYXWVUTSRQ0123456789abcdef", "ZYXWVUTSRQ0123456789"],
    ["an AWS access key id", "id=AKIAIOSFODNN7EXAMPLE,", "AKIAIOSFODNN7EXAMPLE"],
    ["a GitHub token", "ghp_0123456789abcdefghijABCDEFGHIJ012345", "ghp_0123456789"],
    ["a fine-grained GitHub token", "github_pat_11AAAAAAA0123456789_abcdefghij", "11AAAAAAA0123"],
    ["a Slack token", "xoxb-123456789012-abcdefghij", "123456789012-abcdefghij"],
    ["a Google API key", `AIza${"B".repeat(35)}`, "B".repeat(35)],
    ["a JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "eyJzdWIiOiIxMjM0In0"],
    ["a bearer token", "curl -H 'Authorization: Bearer abc.def'", "abc.def"],
    ["a lone bearer", "sent bearer XyZ123 to the API", "XyZ123"],
    ["an authorization header", "authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"],
    ["an x-api-key header", `{"x-api-key": "k-12345678"}`, "k-12345678"],
    ["a capability token", `t=${"r".repeat(24)}.${"M".repeat(43)}`, "M".repeat(43)],
    ["URL credentials", "https://alice:s3cr3tpass@example.com/x", "s3cr3tpass"],
    ["a private key", "-----BEGIN RSA PRIVATE KEY-----MIIEow+/abc", "MIIEow"],
    ["a password field", `{"db_password": "hunter2-horse"}`, "hunter2-horse"],
    ["a SECRET variable", "export CLIENT_SECRET=abcdef123", "abcdef123"],
    ["a token field", "session_token: 'tok_1234567'", "tok_1234567"],
  ])("removes %s", (_what, line, secret) => {
    const redacted = redactSecrets(line);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain(REDACTED);
  });

  it("removes the miner's env values exactly, longest first, and keeps short ones", () => {
    const values = ["value-one-2024", "value-one-2024-extended", "abc"];
    const line = "a value-one-2024-extended b value-one-2024 c abc d";
    const redacted = redactSecrets(line, { exact: values });
    expect(redacted).toBe(`a ${REDACTED} b ${REDACTED} c abc d`);
    expect(MIN_ENV_VALUE_LENGTH).toBe(4);
    // A value with pattern syntax is a plain string, not a pattern.
    expect(redactSecrets("x (a+)+$ y", { exact: ["(a+)+$"] })).toBe(`x ${REDACTED} y`);
  });

  it("keeps ordinary log text", () => {
    for (const line of [
      "prompt_tokens: 123456, completion_tokens: 42",
      "hotkey=5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY",
      "task fix-the-build finished in 12.5 s",
      "running pytest -q tests/test_api.py::test_auth",
      "authorization failed for user bob",
      "the key point is that it works",
      "max_tokens=1024",
    ]) {
      expect(redactSecrets(line), line).toBe(line);
    }
  });

  it.each(ADVERSARIAL)("stays linear on 64 KiB of %s (every pattern < 50 ms)", (_what, line) => {
    expect(line.length).toBeGreaterThanOrEqual(KIB64 - 1);
    for (const { name, pattern, replacement } of SECRET_PATTERNS) {
      const ms = timed(() => {
        pattern.lastIndex = 0;
        return line.replace(pattern, replacement);
      });
      expect(ms, name).toBeLessThan(50);
    }
    expect(
      timed(() => redactNamedSecrets(line)),
      "name=value scan",
    ).toBeLessThan(50);
    expect(
      timed(() => redactSecrets(line, { exact: ["aaaa", "sk-sk-"] })),
      "all",
    ).toBeLessThan(50);
  });

  it("strips score- and weight-shaped keys at every depth", () => {
    const payload = {
      status: "running",
      score: 1,
      task_score: 0.5,
      nested: { Weights: [1], reward: 2, passed: true, keep: "x", deeper: [{ trial_scores: [1] }] },
    };
    expect(publicPayload(payload, { redact: false })).toEqual({
      status: "running",
      nested: { keep: "x", deeper: [{}] },
    });
    expect(isScoreShapedKey("jobScore")).toBe(true);
    expect(isScoreShapedKey("message")).toBe(false);
    expect(publicPayload({ message: "Bearer abcdef" }, { redact: true })).toEqual({
      message: `Bearer ${REDACTED}`,
    });
  });
});
