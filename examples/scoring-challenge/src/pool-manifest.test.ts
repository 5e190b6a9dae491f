/**
 * A pool directory written by corpus/build_pool.py (its own writer, run through python3 on
 * synthetic sources: no download) loads unchanged with loadCorpus: the manifest's extra fields
 * (packages, licences, drift, ...) are optional, the gzip and the holdout are what it expects.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { loadCorpus, sliceCorpus } from "./corpus.js";

const corpusScripts = fileURLToPath(new URL("../corpus/", import.meta.url));

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Run build_pool.assemble + write_pool on four synthetic sources into a fresh directory. */
function buildSyntheticPool(extra: Record<string, unknown> = {}): string {
  const out = mkdtempSync(join(tmpdir(), "pool-"));
  dirs.push(out);
  const script = `
import json, sys
sys.path.insert(0, sys.argv[1])
import build_pool as bp
docs = [(s, f"doc{d}", "".join(f"{s} {d} line {i}: some text\\r\\n   \\n\\n\\n" for i in range(400)))
        for s in ("alpha", "beta", "gamma", "delta") for d in range(3)]
data, kept, uncapped = bp.assemble(docs, chunk_size=2048)
bp.write_pool(__import__("pathlib").Path(sys.argv[2]), data,
              {"sources": kept, "packages": {s: "1.0-1" for s in kept}, **json.loads(sys.argv[3])})
`;
  execFileSync("python3", ["-c", script, corpusScripts, out, JSON.stringify(extra)], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  return out;
}

describe("a pool written by build_pool.py", () => {
  it("loads with loadCorpus, its last tenth held out, its extra fields ignored", async () => {
    const dir = buildSyntheticPool({ drift: { pinned_sha256: "0".repeat(64) } });
    const manifest = JSON.parse(readFileSync(join(dir, "corpus.json"), "utf8"));
    expect(manifest.file).toBe("pool.txt.gz");
    const corpus = await loadCorpus(dir);
    expect(corpus.version).toBe(2);
    expect(corpus.sha256).toBe(manifest.sha256);
    expect(corpus.data.length).toBe(manifest.bytes);
    expect(corpus.holdout.length).toBe(Math.floor(manifest.bytes / 10));
    expect(corpus.data.subarray(-corpus.holdout.length).equals(corpus.holdout)).toBe(true);
    // Normalised (no \r, no trailing spaces, no runs of blank lines) and every source present.
    const text = corpus.data.toString("utf8");
    expect(text).not.toMatch(/\r| \n|\n\n\n/);
    for (const source of ["alpha", "beta", "gamma", "delta"]) expect(text).toContain(source);
    const { stream } = sliceCorpus(corpus, 4096);
    expect(corpus.holdout.includes(stream.subarray(0, 64))).toBe(false);
  });

  it("is refused once its text no longer matches the pinned sha256", async () => {
    const dir = buildSyntheticPool();
    const file = join(dir, "pool.txt.gz");
    const data = gunzipSync(readFileSync(file));
    data[100] = data[100] === 0x61 ? 0x62 : 0x61;
    writeFileSync(file, gzipSync(data));
    await expect(loadCorpus(dir)).rejects.toThrow(/it was changed or damaged/);
    expect(createHash("sha256").update(data).digest("hex")).not.toBe(
      JSON.parse(readFileSync(join(dir, "corpus.json"), "utf8")).sha256,
    );
  });
});
