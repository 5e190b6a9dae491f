import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BANDS,
  estimatedJaccard,
  fingerprint,
  jaccard,
  MINHASH_SIZE,
  NEAR_DUPLICATE_THRESHOLD,
  type SourceFile,
} from "./near-duplicate.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../test/fixtures/similarity/${name}`, import.meta.url), "utf8");

const bundle = (architecture: string, training: string, extra: SourceFile[] = []) => [
  { path: "architecture.py", text: fixture(architecture) },
  { path: "training.py", text: fixture(training) },
  ...extra,
];

const similarity = (a: SourceFile[], b: SourceFile[]) =>
  jaccard(fingerprint(a).shingles, fingerprint(b).shingles);

describe("near-duplicate fingerprints", () => {
  it("sees through renamed names, new comments, docstrings, quotes and hyperparameters", () => {
    const original = bundle("transformer.py", "training_a.py");
    const disguised = bundle("transformer_disguised.py", "training_a.py");
    expect(similarity(original, disguised)).toBeGreaterThanOrEqual(NEAR_DUPLICATE_THRESHOLD);
  });

  it("is 1 for the same code laid out differently, and ignores files that are not Python", () => {
    const source = fixture("conv.py");
    const relaid = source
      .replaceAll("    ", "\t")
      .replaceAll("channels", "c")
      .replace(/#.*$/gm, "# rewritten");
    const a = [{ path: "architecture.py", text: source }];
    const b = [
      { path: "architecture.py", text: relaid },
      { path: "README.md", text: "An entirely different README\n".repeat(50) },
    ];
    expect(similarity(a, b)).toBe(1);
  });

  it("keeps independent bundles apart, even with the same training loop", () => {
    const pairs: [SourceFile[], SourceFile[]][] = [
      [bundle("transformer.py", "training_a.py"), bundle("conv.py", "training_a.py")],
      [bundle("transformer.py", "training_a.py"), bundle("gru.py", "training_a.py")],
      [bundle("conv.py", "training_a.py"), bundle("gru.py", "training_b.py")],
      // Same architecture, a different training script: related, not a copy.
      [bundle("transformer.py", "training_a.py"), bundle("transformer.py", "training_b.py")],
    ];
    for (const [a, b] of pairs) expect(similarity(a, b)).toBeLessThan(0.7);
  });

  it("estimates Jaccard from the MinHash signature and bands it for lookup", () => {
    const a = fingerprint(bundle("transformer.py", "training_a.py"));
    const b = fingerprint(bundle("transformer_disguised.py", "training_a.py"));
    const c = fingerprint(bundle("gru.py", "training_b.py"));
    expect(a.minhash).toHaveLength(MINHASH_SIZE);
    expect(a.bands).toHaveLength(BANDS);
    expect(
      Math.abs(estimatedJaccard(a.minhash, b.minhash) - jaccard(a.shingles, b.shingles)),
    ).toBeLessThan(0.1);
    // A copy shares LSH buckets; an unrelated bundle shares none.
    expect(a.bands.filter((band) => b.bands.includes(band)).length).toBeGreaterThan(10);
    expect(a.bands.filter((band) => c.bands.includes(band))).toEqual([]);
  });

  it("is deterministic and sorted, so stored fingerprints compare across processes", () => {
    const files = bundle("gru.py", "training_b.py");
    const one = fingerprint(files);
    expect(fingerprint(files)).toEqual(one);
    expect([...one.shingles]).toEqual([...one.shingles].sort((x, y) => x - y));
    expect(new Set(one.shingles).size).toBe(one.shingles.length);
  });

  it("handles sources shorter than a shingle, and empty ones", () => {
    const tiny = fingerprint([{ path: "a.py", text: "x = 1" }]);
    expect(tiny.shingles).toHaveLength(1);
    expect(jaccard(tiny.shingles, fingerprint([{ path: "b.py", text: "y = 2" }]).shingles)).toBe(1);
    const empty = fingerprint([{ path: "a.py", text: "# nothing\n" }]);
    expect(empty.shingles).toHaveLength(0);
    expect(jaccard(empty.shingles, tiny.shingles)).toBe(0);
  });
});
