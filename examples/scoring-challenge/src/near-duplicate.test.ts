import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readBundleZip } from "./bundle/index.js";
import {
  BANDS,
  estimatedJaccard,
  FINGERPRINT_VERSION,
  fingerprint,
  fingerprintOf,
  isNearDuplicate,
  jaccard,
  MINHASH_SIZE,
  NEAR_DUPLICATE_THRESHOLD,
  SHINGLE_TOKENS,
  type SourceFile,
  shingleHashes,
  structuralTokens,
} from "./near-duplicate.js";
import { reachableCode } from "./python-reachability.js";
import { pythonTokens } from "./python-tokens.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../test/fixtures/similarity/${name}`, import.meta.url), "utf8");

const bundle = (architecture: string, training: string, extra: SourceFile[] = []) => [
  { path: "architecture.py", text: fixture(architecture) },
  { path: "training.py", text: fixture(training) },
  ...extra,
];

const similarity = (a: readonly SourceFile[], b: readonly SourceFile[]) =>
  jaccard(fingerprint(a).shingles, fingerprint(b).shingles);

/** The similarity without the reachability pass: every token of every `.py` file but annotations and docstrings. */
const similarityOfAllCode = (a: readonly SourceFile[], b: readonly SourceFile[]) => {
  const all = (files: readonly SourceFile[]) =>
    fingerprintOf(
      files
        .filter((f) => f.path.endsWith(".py"))
        .flatMap((f) => shingleHashes(structuralTokens(pythonTokens(f.text)))),
    ).shingles;
  return jaccard(all(a), all(b));
};

/** The similarity as version 2 measured it: the reachable code, annotations and docstrings in. */
const similarityWithAnnotations = (a: readonly SourceFile[], b: readonly SourceFile[]) => {
  const reachable = (files: readonly SourceFile[]) =>
    fingerprintOf(reachableCode(files).flatMap((f) => shingleHashes(f.tokens))).shingles;
  return jaccard(reachable(a), reachable(b));
};

/** A bundle of test/fixtures/copies/<name> (the copies of issue 31, and two honest models). */
const copyFixture = (name: string): SourceFile[] =>
  ["architecture.py", "training.py"].map((path) => ({
    path,
    text: readFileSync(new URL(`../test/fixtures/copies/${name}/${path}`, import.meta.url), "utf8"),
  }));

/** The example bundles as miners submit them (bundles/<name>.zip). */
async function example(name: string): Promise<SourceFile[]> {
  const zip = readFileSync(new URL(`../bundles/${name}.zip`, import.meta.url));
  const read = await readBundleZip(zip);
  if (!read.ok) throw new Error(`${name}.zip: ${read.error.message}`);
  return read.value.map(({ path, text }) => ({ path, text }));
}

/**
 * `count` generated Python functions that nothing calls, each different in shape (so that they
 * add many distinct shingles, as the attack review's 40 generated functions did), every line
 * prefixed by `indent` (to nest them in a class).
 */
function deadFunctions(count: number, seed: number, indent = ""): string {
  let state = seed >>> 0;
  const pick = <T>(items: readonly T[]): T => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return items[state % items.length]!;
  };
  const op = () => pick(["+", "-", "*", "//", "%", "**", "&", "|", "^", "<<", ">>"]);
  const cmp = () => pick(["<", ">", "<=", ">=", "==", "!="]);
  const num = () => pick(["1", "2", "3", "7", "16", "0.5", "1e-3"]);
  const statements = [
    () => `t = a ${op()} b ${op()} ${num()}`,
    () => `if a ${cmp()} b:\n        return [a, b, ${num()}]`,
    () => `for k in range(${num()}):\n        b = b ${op()} k`,
    () => `while a ${cmp()} ${num()}:\n        a = a ${op()} 1`,
    () => `try:\n        c = a ${op()} b\n    except ZeroDivisionError:\n        c = None`,
    () => `d = {k: v for k, v in zip(range(${num()}), [a, b])}`,
    () => `e = [x ${op()} ${num()} for x in (a, b, c) if x is not None]`,
    () => `with torch.no_grad():\n        w = torch.zeros(${num()}).sum()`,
    () => `assert a ${cmp()} ${num()}, "bad input"`,
    () => `a, b = b ${op()} ${num()}, a`,
  ];
  const functions: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = Array.from({ length: 4 + (i % 4) }, () => `    ${pick(statements)()}`);
    functions.push(
      [`def helper_${i}(a, b, c=None):`, ...body, `    return a ${op()} b`].join("\n"),
    );
  }
  return functions
    .join("\n\n\n")
    .split("\n")
    .map((line) => (line === "" ? line : indent + line))
    .join("\n");
}

/** `good`'s two files unchanged, then `change` applied to them, plus `extra` files. */
async function padded(
  change: (files: { architecture: string; training: string }) => {
    architecture: string;
    training: string;
  } = (files) => files,
  extra: SourceFile[] = [],
): Promise<SourceFile[]> {
  const [architecture, training] = await example("good").then((files) =>
    ["architecture.py", "training.py"].map((path) => files.find((f) => f.path === path)!.text),
  );
  const changed = change({ architecture: architecture!, training: training! });
  return [
    { path: "architecture.py", text: changed.architecture },
    { path: "training.py", text: changed.training },
    ...extra,
  ];
}

const HELPERS: SourceFile = {
  path: "helpers.py",
  text: `import torch\n\n\n${deadFunctions(40, 1)}\n`,
};

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
    expect(one.version).toBe(FINGERPRINT_VERSION);
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

  it("cuts one shingle per window position: n tokens give n - SHINGLE_TOKENS + 1", () => {
    // Distinct numbers of `+` between names make every window different.
    const tokens = (n: number) =>
      pythonTokens(Array.from({ length: n }, (_, i) => (i % 2 ? "+" : `x${i}`)).join(" "));
    expect(shingleHashes(tokens(SHINGLE_TOKENS - 1))).toHaveLength(1);
    expect(shingleHashes(tokens(SHINGLE_TOKENS))).toHaveLength(1);
    expect(shingleHashes(tokens(SHINGLE_TOKENS + 1))).toHaveLength(2);
    expect(shingleHashes(tokens(SHINGLE_TOKENS + 5))).toHaveLength(6);
    expect(shingleHashes([])).toEqual([]);
  });
});

describe("the near-duplicate threshold", () => {
  it("counts a similarity equal to the threshold as a near-duplicate, and not one below it", () => {
    expect(isNearDuplicate(NEAR_DUPLICATE_THRESHOLD)).toBe(true);
    expect(isNearDuplicate(1)).toBe(true);
    expect(isNearDuplicate(NEAR_DUPLICATE_THRESHOLD - 1e-9)).toBe(false);
    expect(isNearDuplicate(0.5, 0.5)).toBe(true);
    expect(isNearDuplicate(0.49, 0.5)).toBe(false);
  });

  it("reaches the threshold exactly with 17 shared shingles of 20", () => {
    const a = fingerprintOf(Array.from({ length: 20 }, (_, i) => i + 1));
    const b = fingerprintOf(Array.from({ length: 17 }, (_, i) => i + 1));
    const value = jaccard(a.shingles, b.shingles);
    expect(value).toBe(NEAR_DUPLICATE_THRESHOLD);
    expect(isNearDuplicate(value)).toBe(true);
    const below = fingerprintOf(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(isNearDuplicate(jaccard(a.shingles, below.shingles))).toBe(false);
  });

  it("builds the same fingerprint from a shingle set in any order, repeats ignored", () => {
    expect(fingerprintOf([3, 1, 2, 3])).toEqual(fingerprintOf([1, 2, 3]));
    expect(fingerprintOf([]).minhash.every((value) => value === 0xffffffff)).toBe(true);
  });
});

describe("the example bundles", async () => {
  const names = ["good", "duplicate", "broken", "cheat-weights", "lookahead", "malicious"];
  const files = Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await example(name)] as const)),
  );

  it("duplicate is a near-copy of good; no other pair is a near-duplicate", () => {
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const [a, b] = [names[i]!, names[j]!];
        const value = similarity(files[a]!, files[b]!);
        const copy = [a, b].includes("good") && [a, b].includes("duplicate");
        expect(isNearDuplicate(value), `${a} vs ${b}: ${value.toFixed(3)}`).toBe(copy);
      }
    }
  });

  it("have no unreachable code: the pass leaves each one's similarities as they were", () => {
    for (const name of names) {
      expect(similarity(files[name]!, files.good!)).toBe(
        similarityOfAllCode(files[name]!, files.good!),
      );
    }
  });
});

describe("a copy of good padded with code that never runs is still a near-copy", async () => {
  const good = await example("good");
  const appendToBoth = (text: string) => (files: { architecture: string; training: string }) => ({
    architecture: `${files.architecture}\n\n${text}\n`,
    training: `${files.training}\n\n${text}\n`,
  });
  const attacks: Record<string, SourceFile[]> = {
    "an extra module of 40 functions nothing imports": await padded(undefined, [HELPERS]),
    "the same module, imported": await padded(
      (f) => ({ ...f, architecture: `import helpers\n${f.architecture}` }),
      [HELPERS],
    ),
    "the same module, star-imported": await padded(
      (f) => ({ ...f, architecture: `from helpers import *\n${f.architecture}` }),
      [HELPERS],
    ),
    "the same module, imported as a package by a module nothing imports": await padded(undefined, [
      { path: "pad/__init__.py", text: HELPERS.text },
      { path: "pad/more.py", text: `from . import *\n${deadFunctions(20, 2)}\n` },
      { path: "unused.py", text: "import pad.more\n" },
    ]),
    "40 dead functions appended inside architecture.py and training.py": await padded(
      appendToBoth(deadFunctions(20, 3)),
    ),
    "dead functions under `if __name__ == '__main__':` that calls them all": await padded(
      appendToBoth(
        `${deadFunctions(20, 4)}\n\nif __name__ == "__main__":\n${Array.from({ length: 20 }, (_, i) => `    helper_${i}(1, 2)`).join("\n")}\n`,
      ),
    ),
    "dead functions under `if False:`": await padded(
      appendToBoth(`if False:\n${deadFunctions(20, 5, "    ")}\n`),
    ),
    "dead code after the return of build_model and at the end of train": await padded((f) => ({
      architecture: f.architecture.replace(
        "    return ByteTransformer(ctx.vocab_size, ctx.sequence_length)\n",
        `    return ByteTransformer(ctx.vocab_size, ctx.sequence_length)\n${deadBody(6)}\n`,
      ),
      training: `${f.training}    return\n${deadBody(7)}\n`,
    })),
    "40 methods nobody calls inside the model class": await padded((f) => ({
      ...f,
      architecture: f.architecture.replace(
        "\n\ndef build_model(ctx):",
        `\n${deadFunctions(40, 8, "    ").replaceAll("(a, b, c=None)", "(self, a, b, c=None)")}\n\n\ndef build_model(ctx):`,
      ),
    })),
  };

  it.each(Object.keys(attacks))("%s", (attack) => {
    const copy = attacks[attack]!;
    // Without the pass, the padding dilutes the copy below the threshold: the attack is real.
    expect(similarityOfAllCode(copy, good)).toBeLessThan(NEAR_DUPLICATE_THRESHOLD);
    expect(similarity(copy, good)).toBeGreaterThanOrEqual(NEAR_DUPLICATE_THRESHOLD);
  });

  it("and so is duplicate (good renamed) padded the same ways", async () => {
    const duplicate = await example("duplicate");
    const text = (path: string) => duplicate.find((f) => f.path === path)!.text;
    const copy = [
      {
        path: "architecture.py",
        text: `import helpers\n${text("architecture.py")}\n\n${deadFunctions(20, 9)}\n`,
      },
      { path: "training.py", text: `${text("training.py")}\n\n${deadFunctions(20, 10)}\n` },
      HELPERS,
    ];
    expect(similarityOfAllCode(copy, good)).toBeLessThan(NEAR_DUPLICATE_THRESHOLD);
    expect(similarity(copy, good)).toBeGreaterThanOrEqual(NEAR_DUPLICATE_THRESHOLD);
  });
});

/** Statements of a function body (indented 4) to put where they never run. */
function deadBody(seed: number): string {
  return deadFunctions(6, seed)
    .split("\n")
    .filter((line) => line.startsWith("    "))
    .join("\n");
}

describe("disguised copies of good (issue 31)", async () => {
  const good = await example("good");

  it("good with every annotation and docstring deleted is a near-copy (0.81 before)", () => {
    const copy = copyFixture("unannotated");
    expect(similarityWithAnnotations(copy, good)).toBeLessThan(NEAR_DUPLICATE_THRESHOLD);
    expect(similarity(copy, good)).toBe(1);
  });

  it("good verbatim, reached only through an unread module-level setdefault, is a near-copy (0.00 before)", () => {
    const copy = copyFixture("registered");
    expect(copy[0]!.text).toContain('_x = MODELS.setdefault("byte-transformer", ByteTransformer)');
    expect(similarity(copy, good)).toBeGreaterThanOrEqual(NEAR_DUPLICATE_THRESHOLD);
  });

  it("a hand rewrite is past any token measure: the behavioural check catches it, not this one", () => {
    expect(similarity(copyFixture("rewrite"), good)).toBeLessThan(0.5);
  });

  it("two honest models sharing RMSNorm, rotary embeddings and SwiGLU are not near-copies", () => {
    const [deep, wide] = [copyFixture("honest-deep"), copyFixture("honest-wide")];
    expect(deep[0]!.text).toContain("class RMSNorm");
    expect(wide[0]!.text).toContain("class SwiGLU");
    expect(similarity(deep, wide)).toBeLessThan(0.6);
    expect(similarity(deep, good)).toBeLessThan(0.6);
    expect(similarity(wide, good)).toBeLessThan(0.6);
  });
});
