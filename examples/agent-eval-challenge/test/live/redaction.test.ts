// The redaction of log lines (rule 21): each secret kind goes, ordinary text stays, the miner's
// env values go in every spelling an agent prints them in and where a cut left only a piece of
// one, and every pass stays linear: adversarial lines (built to make a backtracking pattern
// rescan) through every pattern, the generic name=value scan, the env spellings and the whole
// redaction, each timed at 2, 16 and 64 KiB: growth, never an absolute time (a quadratic pass
// grows 64 then 16 times where a linear one grows 8 then 4 times).
import { describe, expect, it } from "vitest";
import {
  MIN_CUT_PIECE_LENGTH,
  MIN_CUT_SECRET_LENGTH,
  suffixPrefixOverlap,
} from "../../src/live/cut-edges.js";
import { embeddedBase64, envSpellings } from "../../src/live/env-spellings.js";
import {
  isScoreShapedKey,
  MIN_ENV_VALUE_LENGTH,
  publicPayload,
  REDACTED,
  redactNamedSecrets,
  redactSecrets,
  SECRET_PATTERNS,
} from "../../src/live/redaction.js";

const KIB16 = 16 * 1024;
const KIB64 = 64 * 1024;
/**
 * Test lines as flat strings, like lines parsed from a request body: V8 builds `repeat`,
 * `slice` and `+` results as string trees and slices, on which some regexp paths run many times
 * slower (measured: 12 ms instead of 0.1 ms on 64 KiB), which would time the test's strings.
 */
const flat = (text: string) => Buffer.from(text, "utf8").toString("utf8");
const fill = (unit: string, size = KIB64) =>
  flat(unit.repeat(Math.ceil(size / unit.length)).slice(0, size));

/** Lines built against each pattern, at `size` characters: prefixes repeated, near matches, long gaps. */
const ADVERSARIAL: [string, (size: number) => string][] = [
  ["sk- repeated", (n) => fill("sk-", n)],
  ["sk- and 15 key characters", (n) => fill("sk-aaaaaaaaaaaaaaa!", n)],
  ["AKIA repeated", (n) => fill("AKIA", n)],
  ["AKIA and 15 characters", (n) => fill("AKIAAAAAAAAAAAAAAAA ", n)],
  ["ghp_ repeated", (n) => fill("ghp_", n)],
  ["github_pat_ repeated", (n) => fill("github_pat_", n)],
  ["xoxb- repeated", (n) => fill("xoxb-", n)],
  ["AIza repeated", (n) => fill("AIza", n)],
  ["eyJ repeated", (n) => fill("eyJ", n)],
  ["eyJ runs without a second part", (n) => fill("eyJaaaaaaaaaaaaaaaa.", n)],
  ["one long key run", (n) => fill("a", n)],
  ["64-character ids without a MAC", (n) => fill(`${"a".repeat(64)}.`, n)],
  ["ids and short MACs", (n) => fill(`${"a".repeat(20)}.${"b".repeat(42)} `, n)],
  ["authorization without a separator", (n) => flat(`authorization${" ".repeat(n - 14)}x`)],
  ["authorization repeated", (n) => fill("authorization", n)],
  ["authorization: repeated", (n) => fill("authorization: '", n)],
  ["bearer repeated", (n) => fill("bearer ", n)],
  ["bearer and long blanks", (n) => flat(`bearer${"\t".repeat(n - 6)}`)],
  ["URL credential prefixes", (n) => fill("://a:", n)],
  ["URL credentials without @", (n) => fill(`://${"u".repeat(100)}:${"p".repeat(100)}/`, n)],
  ["private key headers", (n) => fill("-----BEGIN PRIVATE KEY-----", n)],
  ["private key header prefixes", (n) => fill("-----BEGIN AAAAAAAAAAAAAAAAAAAA ", n)],
  ["separators only", (n) => fill("=", n)],
  ["colons only", (n) => fill(":", n)],
  ["short pairs", (n) => fill("a=", n)],
  ["secret names without values", (n) => fill("api_key=", n)],
  ["secret names with short values", (n) => fill("token=abc ", n)],
  ["long names", (n) => fill(`${"k".repeat(63)}=`, n)],
  ["quoted gaps", (n) => fill(`"password" : " `, n)],
  ["values made of separators", (n) => flat(`token=${"=".repeat(n - 6)}`)],
  ["mixed", (n) => fill("sk-AKIAghp_eyJ.authorization:bearer ://-----BEGIN token=", n)],
];

/**
 * Env values built against the exact and the cut-edge passes: long runs of one character (every
 * position a near match), periodic values that almost repeat (KMP's worst case), and values
 * whose spellings (hex, base64, \u) are long runs of their own.
 */
const ADVERSARIAL_ENV: [string, string[], (size: number) => string][] = [
  ["a 16 KiB run of one character", ["a".repeat(KIB16 - 1)], (n) => fill("a", n)],
  ["a run that fails at its last character", [`${"a".repeat(4096)}b`], (n) => fill("a", n)],
  ["an almost periodic value", [`${"ab".repeat(2048)}c`], (n) => fill("ab", n)],
  ["its hex spelling repeated", ["aaaaaaaaaaaaaaaa"], (n) => fill("6161616161", n)],
  ["its base64 spelling repeated", ["aaaaaaaaaaaaaaaa"], (n) => fill("YWFh", n)],
  ["its \\u spelling repeated", ["aaaaaaaaaaaaaaaa"], (n) => fill("\\u0061", n)],
  [
    "64 values that share their ends",
    Array.from({ length: 64 }, (_, i) => `${String(i).padStart(2, "0")}${"x".repeat(510)}`),
    (n) => fill("0x", n),
  ],
];

/** The three sizes every pass is timed at: 2 KiB, 16 KiB (8 times more), 64 KiB (4 times more). */
const SIZES = [2 * 1024, KIB16, KIB64] as const;

/**
 * The CPU time of one run of `run` on each of `inputs`, in the process's CPU time (time spent
 * descheduled on a busy machine is not counted). Every input is measured over the same volume
 * of text (a shorter one run proportionally more often, about a millisecond in all), as the
 * best of three rounds after a warmup.
 */
function costs(run: (input: string) => unknown, inputs: readonly string[]): number[] {
  const cpu = (input: string, repeats: number) => {
    const start = process.cpuUsage();
    for (let i = 0; i < repeats; i++) run(input);
    const used = process.cpuUsage(start);
    return used.user + used.system;
  };
  for (const input of inputs) cpu(input, 1);
  const longest = inputs[inputs.length - 1]!;
  let repeats = 1;
  while (cpu(longest, repeats) < 1000 && repeats < 1 << 10) repeats *= 2;
  return inputs.map((input) => {
    const times = repeats * Math.max(1, Math.round(longest.length / input.length));
    return Math.min(...[0, 1, 2].map(() => cpu(input, times))) / times;
  });
}

/**
 * Whether `run` stays linear on the lines `line` builds at {@link SIZES}: linear work grows about
 * 8 times, then 4 times; quadratic work about 64 times, then 16 times. Only growth well past
 * linear over both steps fails: V8 switches some string and regexp paths to slower ones past a
 * certain length (measured: up to 100 times slower per character, once, somewhere between 2 and
 * 64 KiB), which inflates one step but never both, while a pass that does quadratic work inflates
 * both.
 */
function expectLinear(
  run: (input: string) => unknown,
  line: (size: number) => string,
  what: string,
) {
  const [small, middle, large] = costs(run, SIZES.map(line));
  const first = middle! / Math.max(small!, 1e-3);
  const second = large! / Math.max(middle!, 1e-3);
  expect(
    first > 32 && second > 10,
    `${what} grew ${first.toFixed(1)} then ${second.toFixed(1)} times (linear: 8 then 4)`,
  ).toBe(false);
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

  // A value no key shape matches, with distinctive ends: only the env passes can remove it.
  const VALUE = "Q7f3a9c2e41b8d6Z";
  const bytes = Buffer.from(VALUE);
  const unicode = (upper: boolean) =>
    [...VALUE]
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .map((e) => (upper ? e.toUpperCase().replace("\\U", "\\u") : e))
      .join("");

  it.each([
    ["as it is", VALUE],
    ["in base64", bytes.toString("base64")],
    ["in base64 without padding", bytes.toString("base64").replace(/=+$/, "")],
    ["in base64url", bytes.toString("base64url")],
    ["in lower-case hex", bytes.toString("hex")],
    ["in upper-case hex", bytes.toString("hex").toUpperCase()],
    ["reversed", [...VALUE].reverse().join("")],
    ["as \\uXXXX escapes", unicode(false)],
    ["as \\uXXXX escapes in upper case", unicode(true)],
    ["URL-encoded", encodeURIComponent(`${VALUE}/é`)],
  ])("removes an env value printed %s", (_how, spelling) => {
    const exact = envSpellings([VALUE, `${VALUE}/é`]);
    const redacted = redactSecrets(`printed: ${spelling} (done)`, { exact });
    expect(redacted).toBe(`printed: ${REDACTED} (done)`);
  });

  it("removes an env value whose base64 has + or / when printed whole in base64url", () => {
    // Its base64url differs from its base64 ('_' for '/'), and its length (19 bytes) leaves a
    // last base64 character that mixes in padding bits, which the embedded runs never cover.
    const value = `${VALUE}??>`;
    const base64 = Buffer.from(value).toString("base64");
    const base64url = Buffer.from(value).toString("base64url");
    expect(base64).toMatch(/[+/]/);
    expect(value.length % 3).not.toBe(0);
    const redacted = redactSecrets(`printed: ${base64url} (done)`, {
      exact: envSpellings([value]),
    });
    expect(redacted).toBe(`printed: ${REDACTED} (done)`);
  });

  it("removes an env value printed by Python's json.dumps (non-ASCII as \\u escapes)", () => {
    const value = `café-${VALUE}`;
    // json.dumps({"GREETING": value}) with its default ensure_ascii=True.
    const dumped = `{"GREETING": "caf\\u00e9-${VALUE}"}`;
    const redacted = redactSecrets(`env ${dumped} loaded`, { exact: envSpellings([value]) });
    expect(redacted).toBe(`env {"GREETING": "${REDACTED}"} loaded`);
  });

  it("removes an env value inside a longer base64 string, at each of its three offsets", () => {
    const exact = envSpellings([VALUE]);
    for (const [before, after] of [
      ["user:", ":x"],
      ["xuser:", "\n"],
      ["xxuser:", ""],
    ] as const) {
      for (const alphabet of ["base64", "base64url"] as const) {
        const encoded = Buffer.from(`${before}${VALUE}${after}`).toString(alphabet);
        const redacted = redactSecrets(`Authorization-ish ${encoded}`, { exact });
        expect(redacted, `${alphabet} after ${JSON.stringify(before)}`).toContain(REDACTED);
        // What is left around the marker decodes, at any alignment, to no two consecutive
        // characters of the value: at most 4 bits of its first and of its last byte remain.
        for (const piece of redacted.split(REDACTED)) {
          const run = piece.replace(/^.* /, "");
          for (let start = 0; start < 4; start++) {
            const chars = run.slice(start, start + Math.floor((run.length - start) / 4) * 4);
            const decoded = Buffer.from(chars, alphabet).toString("latin1");
            for (let i = 0; i + 2 <= VALUE.length; i++) {
              expect(decoded).not.toContain(VALUE.slice(i, i + 2));
            }
          }
        }
      }
    }
    // Each offset's run keeps only the characters the value alone decides.
    expect(embeddedBase64(Buffer.from("abc"))).toEqual(["YWJj", "FiY", "hYm"]);
  });

  it("removes every line of a multi-line env value, each line on its own", () => {
    const pem = `-----BEGIN TEST-----\nQUJDREVGR0hJSktMTU5PUFFSU1RV\nVldYWVphYmNkZWZnaGlqa2xtbm9w\n-----END TEST-----`;
    const exact = envSpellings([pem]);
    for (const line of pem.split("\n")) {
      expect(redactSecrets(`  ${line}  `, { exact })).toBe(`  ${REDACTED}  `);
    }
  });

  it("removes the start of an env value at a line's end, and its end at a line's start", () => {
    const exact = envSpellings([VALUE]);
    for (let length = MIN_CUT_PIECE_LENGTH; length < VALUE.length; length++) {
      expect(redactSecrets(`cut ${VALUE.slice(0, length)}`, { exact })).toBe(`cut ${REDACTED}`);
      expect(redactSecrets(`${VALUE.slice(-length)} rest`, { exact })).toBe(`${REDACTED} rest`);
    }
    // A cut inside a multi-byte character decodes to U+FFFD after the piece.
    expect(redactSecrets(`cut ${VALUE.slice(0, 9)}\uFFFD`, { exact })).toBe(`cut ${REDACTED}`);
    // A cut spelling: the start of the value's base64 at a line's end.
    const base64 = bytes.toString("base64");
    expect(redactSecrets(`b64 ${base64.slice(0, 10)}`, { exact })).toBe(`b64 ${REDACTED}`);
    // Pieces under 4 characters say nothing and stay; so do values under 8 characters.
    expect(redactSecrets(`cut ${VALUE.slice(0, 3)}`, { exact })).toBe(`cut ${VALUE.slice(0, 3)}`);
    expect(MIN_CUT_PIECE_LENGTH).toBe(4);
    expect(MIN_CUT_SECRET_LENGTH).toBe(8);
    const short = envSpellings(["prod-eu1"]);
    expect(redactSecrets("deployed to prod", { exact: envSpellings(["prod-eu"]) })).toBe(
      "deployed to prod",
    );
    expect(redactSecrets("deployed to prod", { exact: short })).toBe(`deployed to ${REDACTED}`);
    // Inside a line, a piece is not a cut: the value is whole or it is not the value.
    expect(redactSecrets(`a ${VALUE.slice(0, 8)} b`, { exact })).toBe(`a ${VALUE.slice(0, 8)} b`);
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

  it.each(ADVERSARIAL)("stays linear on %s (2, 16 and 64 KiB)", (what, line) => {
    expect(line(KIB64).length).toBeGreaterThanOrEqual(KIB64 - 1);
    for (const { name, pattern, replacement } of SECRET_PATTERNS) {
      const replace = (input: string) => {
        pattern.lastIndex = 0;
        return input.replace(pattern, replacement);
      };
      expectLinear(replace, line, `${name} on ${what}`);
    }
    expectLinear(redactNamedSecrets, line, `the name=value scan on ${what}`);
    const exact = envSpellings(["aaaa", "sk-sk-", "aaaaaaaaaaaaaaaa"]);
    expectLinear((input) => redactSecrets(input, { exact }), line, `all of it on ${what}`);
  });

  it.each(ADVERSARIAL_ENV)(
    "stays linear with env values of %s (2, 16 and 64 KiB)",
    (what, values, line) => {
      const exact = envSpellings(values);
      expectLinear((input) => redactSecrets(input, { exact }), line, `a line, ${what}`);
      // The cut-edge check, on a line that ends with a long piece of the value.
      const value = values[0]!;
      const cut = (size: number) => flat(`${line(size)}${value.slice(0, value.length - 1)}`);
      expectLinear((input) => redactSecrets(input, { exact }), cut, `a cut line, ${what}`);
      expectLinear((input) => suffixPrefixOverlap(input, input), line, `the overlap, ${what}`);
    },
  );

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
