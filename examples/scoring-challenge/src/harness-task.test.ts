import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Bundle } from "./bundle/index.js";
import { runTask, sealCorpusSlice } from "./harness-task.js";

describe("sealed corpus slices", () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i);
  const text = Buffer.from("The quick brown fox jumps over the lazy dog");

  it("match the scorer's unsealing byte for byte (vectors from harness_corpus.py)", () => {
    // python3 -c "import harness_corpus; print(harness_corpus.unseal(b'The quick...', bytes(range(32)), 'stream').hex())"
    expect(sealCorpusSlice(text, key, "stream").toString("hex")).toBe(
      "4bd667d077c6b7fcc553ff935051403d904c427bcb85ee4a5a954744f4c17324f98a967719dce9bd6ceb9f",
    );
    expect(sealCorpusSlice(text, key, "holdout").toString("hex")).toBe(
      "a6368a03a48f19e2426f85186fb04837a7e4ac7c86c34a7185c14700ba4e8e917a691d8976ba22875c4939",
    );
  });

  it("open again with the same key and label only", () => {
    const sealed = sealCorpusSlice(text, key, "stream");
    expect(sealCorpusSlice(sealed, key, "stream")).toEqual(text);
    expect(sealCorpusSlice(sealed, key, "holdout")).not.toEqual(text);
    const other = Uint8Array.from(key, (b) => b ^ 1);
    expect(sealCorpusSlice(sealed, other, "stream")).not.toEqual(text);
  });
});

describe("the scored run's task", () => {
  const plain = (text: string) => {
    const data = Buffer.from(text.repeat(8));
    return { data, sha256: createHash("sha256").update(data).digest("hex") };
  };
  const stream = plain("It is a truth universally acknowledged. ");
  const holdout = plain("However little known the feelings. ");
  const bundle: Bundle = {
    codeHash: "0".repeat(64),
    zip: Buffer.alloc(0),
    files: [],
    unpackedBytes: 0,
  };
  const options = {
    jobId: "job-1",
    bundle,
    slices: {
      stream: stream.data,
      streamSha256: stream.sha256,
      holdout: holdout.data,
      holdoutSha256: holdout.sha256,
    },
    budgets: { tokenBudget: 4096, stepBudget: 8, memoryMb: 512 },
    nonce: "test-nonce-0123456789",
  };
  /** One run's corpus key (from the scorer's environment) and its two sealed files. */
  const sealedRun = () => {
    const { task } = runTask(options);
    const file = (path: string) =>
      Buffer.from(task.files!.find((f) => f.path === path)!.contentBase64, "base64");
    const keyHex = task.env!["HARNESS_CORPUS_KEY"]!;
    return {
      keyHex,
      key: Buffer.from(keyHex, "hex"),
      stream: file("corpus/stream.bin"),
      holdout: file("corpus/holdout.bin"),
    };
  };

  it("seals each run's corpus with a fresh 32-byte key that only the scorer's environment holds", () => {
    const first = sealedRun();
    const second = sealedRun();
    for (const run of [first, second]) {
      expect(run.keyHex).toMatch(/^[0-9a-f]{64}$/);
      expect(run.stream).toHaveLength(stream.data.length);
      // What the bundle's process sees on disk is not the text...
      expect(run.stream).not.toEqual(stream.data);
      expect(run.holdout).not.toEqual(holdout.data);
      // ...and the key beside it opens it.
      expect(sealCorpusSlice(run.stream, run.key, "stream")).toEqual(stream.data);
      expect(sealCorpusSlice(run.holdout, run.key, "holdout")).toEqual(holdout.data);
    }
    // Two runs of the same bundle on the same slices: nothing one run's files teach carries over.
    expect(second.keyHex).not.toBe(first.keyHex);
    expect(second.stream).not.toEqual(first.stream);
    expect(second.holdout).not.toEqual(first.holdout);
  });
});
