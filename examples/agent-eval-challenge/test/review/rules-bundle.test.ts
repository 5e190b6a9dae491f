// The rules bundle v1: the example's rules load into a sorted, hashed, size-bounded bundle whose
// revision id is the canonical digest of its files, every assignment names it, and a rules
// folder past the limits stops the start.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalDigest } from "../../src/crypto/index.js";
import { loadRulesBundle, MAX_RULES_BYTES, MAX_RULES_FILES } from "../../src/review/index.js";

const RULES = new URL("../../rules/", import.meta.url);
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const path = mkdtempSync(join(tmpdir(), "agent-eval-rules-"));
  folders.push(path);
  return path;
}

describe("rules bundle v1", () => {
  it("loads the example's rules: sorted, each file hashed and encoded, revision = digest of the files", async () => {
    const bundle = await loadRulesBundle(RULES);
    expect(bundle.schema_version).toBe("rules-bundle/v1");
    const paths = bundle.files.map((file) => file.path);
    expect(paths).toEqual(["checks.json", "rules.md"]);
    for (const file of bundle.files) {
      const content = Buffer.from(file.content_b64, "base64");
      expect(content.length).toBe(file.length);
      expect(createHash("sha256").update(content).digest("hex")).toBe(file.sha256);
    }
    expect(bundle.revision_id).toBe(canonicalDigest(bundle.files));
    // The checks are machine-readable and name rules of rules.md.
    const checks = JSON.parse(
      Buffer.from(bundle.files[0]!.content_b64, "base64").toString("utf8"),
    ) as { checks: { id: string; rule: number }[] };
    expect(checks.checks.length).toBeGreaterThan(0);
    const rules = Buffer.from(bundle.files[1]!.content_b64, "base64").toString("utf8");
    for (const check of checks.checks) expect(rules).toContain(`\n${check.rule}. `);
  });

  it("is deterministic, and any byte or name changed is a new revision", async () => {
    const dir = folder();
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "b.md"), "rule b");
    writeFileSync(join(dir, "sub", "a.md"), "rule a");
    writeFileSync(join(dir, "A.md"), "rule A");
    const first = await loadRulesBundle(dir);
    // Sorted by code unit: upper case before lower case, folders as "sub/".
    expect(first.files.map((file) => file.path)).toEqual(["A.md", "b.md", "sub/a.md"]);
    expect((await loadRulesBundle(dir)).revision_id).toBe(first.revision_id);
    writeFileSync(join(dir, "b.md"), "rule B");
    const changed = await loadRulesBundle(dir);
    expect(changed.revision_id).not.toBe(first.revision_id);
  });

  it(`refuses more than ${MAX_RULES_FILES} files, more than 1 MiB, an empty folder and a symlink`, async () => {
    const many = folder();
    for (let index = 0; index <= MAX_RULES_FILES; index++) {
      writeFileSync(join(many, `rule-${index}.md`), "x");
    }
    await expect(loadRulesBundle(many)).rejects.toThrow(/more than 128 files/);

    const large = folder();
    writeFileSync(join(large, "a.md"), Buffer.alloc(MAX_RULES_BYTES / 2, 0x61));
    writeFileSync(join(large, "b.md"), Buffer.alloc(MAX_RULES_BYTES / 2 + 1, 0x62));
    await expect(loadRulesBundle(large)).rejects.toThrow(/more than 1048576 bytes/);
    // Exactly at the limit is accepted.
    writeFileSync(join(large, "b.md"), Buffer.alloc(MAX_RULES_BYTES / 2, 0x62));
    expect((await loadRulesBundle(large)).files).toHaveLength(2);

    await expect(loadRulesBundle(folder())).rejects.toThrow(/holds no file/);

    const linked = folder();
    writeFileSync(join(linked, "a.md"), "x");
    symlinkSync("/etc/hostname", join(linked, "outside.md"));
    await expect(loadRulesBundle(linked)).rejects.toThrow(/neither a file nor a folder/);
  });
});
