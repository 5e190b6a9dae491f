import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ChecksFileError,
  globToRegExp,
  MAX_FINDINGS,
  parseChecks,
  runStaticChecks,
  stricterVerdict,
  verdictOf,
} from "./static-checks.js";

// The shipped rules: what the service serves and the worker applies.
const checks = parseChecks(
  readFileSync(new URL("../../rules/checks.json", import.meta.url), "utf8"),
);
const file = (path: string, text: string | Buffer) => ({
  path,
  data: typeof text === "string" ? Buffer.from(text, "utf8") : text,
});

const CLEAN_AGENT = [
  "import os",
  "import json",
  "from openai import OpenAI",
  "",
  "client = OpenAI(base_url=os.environ['MODEL_BASE_URL'])",
  "",
  "def solve(task):",
  "    with open('/tmp/notes.txt', 'w') as notes:",
  "        notes.write(task)",
  "    answer = client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': task}])",
  "    return json.dumps({'answer': answer.choices[0].message.content, 'local': 'http://localhost:8000'})",
  "",
].join("\n");

// One crafted file per check of checks.json: it must fire that check (and the test fails when a
// check is added without a case here).
const FIRES: Record<string, ReturnType<typeof file>> = {
  "net-raw-socket": file("agent.py", "import socket\ns = socket.socket()\n"),
  "net-hardcoded-url": file("agent.py", "URL = 'https://example.com/api'\n"),
  "net-runtime-install": file("setup.sh", "pip install requests\n"),
  "secret-run-token": file("run.py", 'token = os.environ["EVAL_RUN_TOKEN"]\n'),
  "write-outside-workspace": file("agent.py", "open('/etc/passwd', 'w').write('x')\n"),
  "obfuscated-exec": file("agent.py", "import base64\nexec(base64.b64decode('cHJpbnQoMSk='))\n"),
  "obfuscated-long-line": file("agent.js", `const packed = "${"a".repeat(2100)}";\n`),
  "binary-file": file("lib/native.so", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2])),
  persistence: file("agent.py", "import subprocess\nsubprocess.Popen(['nohup', 'x'])\n"),
};

describe("the static checks of rules/checks.json", () => {
  it("has a crafted case for every check", () => {
    expect(Object.keys(FIRES).sort()).toEqual(checks.map((check) => check.id).sort());
  });

  it.each(Object.entries(FIRES))(
    "%s fires on its crafted file, at the right severity",
    (id, crafted) => {
      const findings = runStaticChecks(checks, [crafted]);
      const check = checks.find((candidate) => candidate.id === id)!;
      const finding = findings.find((candidate) => candidate.check_id === id);
      expect(finding, JSON.stringify(findings)).toBeDefined();
      expect(finding!.path).toBe(crafted.path);
      expect(finding!.severity).toBe(check.severity === "reject" ? "block" : "escalate");
      expect(finding!.message).toContain(check.message);
    },
  );

  it("finds nothing in a clean agent (localhost URLs and /tmp writes are allowed)", () => {
    expect(
      runStaticChecks(checks, [
        file("agent.py", CLEAN_AGENT),
        file("README.md", "Run `pip install -r requirements.txt` before submitting.\n"),
        file("requirements.txt", "openai==1.0.0\n"),
      ]),
    ).toEqual([]);
  });

  it("names the first line a pattern fires on, once per check and file", () => {
    const findings = runStaticChecks(checks, [
      file("a.py", "x = 1\ny = socket.socket()\nz = socket.socket()\n"),
    ]);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toMatch(/\(line 2\)$/);
  });

  it("matches the globs on the basename only", () => {
    expect(runStaticChecks(checks, [file("deep/dir/agent.py", "socket.socket(")])).toHaveLength(1);
    expect(runStaticChecks(checks, [file("agent.py/notes.txt", "socket.socket(")])).toEqual([]);
    expect(globToRegExp("*.py").test("a.py")).toBe(true);
    expect(globToRegExp("*.py").test("a.pyc")).toBe(false);
    expect(globToRegExp("a?.js").test("ab.js")).toBe(true);
    expect(globToRegExp("*.js").test("a.mjs")).toBe(false);
  });

  it("stops at the findings limit", () => {
    const many = Array.from({ length: MAX_FINDINGS + 10 }, (_, index) =>
      file(`m${index}.py`, "socket.socket()"),
    );
    expect(runStaticChecks(checks, many)).toHaveLength(MAX_FINDINGS);
  });
});

describe("verdicts", () => {
  it("maps block to reject, escalate to escalate, nothing to allow", () => {
    expect(verdictOf([])).toBe("allow");
    expect(verdictOf([{ severity: "escalate" }])).toBe("escalate");
    expect(verdictOf([{ severity: "escalate" }, { severity: "block" }])).toBe("reject");
    expect(verdictOf([{ severity: "info" }, { severity: "warning" }])).toBe("allow");
  });

  it("lets a second opinion tighten a verdict, never loosen it", () => {
    expect(stricterVerdict("allow", "escalate")).toBe("escalate");
    expect(stricterVerdict("allow", "reject")).toBe("reject");
    expect(stricterVerdict("escalate", "allow")).toBe("escalate");
    expect(stricterVerdict("reject", "allow")).toBe("reject");
    expect(stricterVerdict("reject", "escalate")).toBe("reject");
  });
});

describe("parseChecks", () => {
  it.each([
    ["not JSON", "{"],
    ["another schema", JSON.stringify({ schema_version: "x", checks: [] })],
    [
      "a bad severity",
      JSON.stringify({
        schema_version: "review-checks/v1",
        checks: [{ id: "a", severity: "warn", files: ["*"], message: "m" }],
      }),
    ],
    [
      "a bad regex",
      JSON.stringify({
        schema_version: "review-checks/v1",
        checks: [{ id: "a", severity: "reject", files: ["*"], pattern: "(", message: "m" }],
      }),
    ],
    [
      "no files",
      JSON.stringify({
        schema_version: "review-checks/v1",
        checks: [{ id: "a", severity: "reject", files: [], message: "m" }],
      }),
    ],
  ])("refuses %s", (_, text) => {
    expect(() => parseChecks(text)).toThrow(ChecksFileError);
  });
});
