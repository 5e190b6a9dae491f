import { describe, expect, it } from "vitest";
import { sealCorpusSlice } from "./harness-task.js";

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
