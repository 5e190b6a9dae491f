import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { CorpusError, loadCorpus, sliceCorpus } from "./corpus.js";

const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A corpus folder holding `text`, with `manifest` fields overridden. */
function corpusDir(
  text: string,
  manifest: Record<string, unknown> = {},
  file = "corpus.txt.gz",
): string {
  const dir = mkdtempSync(join(tmpdir(), "corpus-"));
  dirs.push(dir);
  const data = Buffer.from(text);
  writeFileSync(join(dir, file), file.endsWith(".gz") ? gzipSync(data) : data);
  writeFileSync(
    join(dir, "corpus.json"),
    JSON.stringify({
      version: 1,
      file,
      sha256: sha(data),
      bytes: data.length,
      holdout: { offset: data.length - 4, length: 4 },
      ...manifest,
    }),
  );
  return dir;
}

describe("the corpus", () => {
  it("loads the shipped corpus: pinned, at least 4 MiB, holdout apart", async () => {
    const corpus = await loadCorpus();
    expect(corpus.data.length).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(corpus.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(corpus.training.length + corpus.holdout.length).toBe(corpus.data.length);
    const { stream, streamSha256, holdoutSha256 } = sliceCorpus(corpus, 65_536);
    expect(stream.length).toBe(65_536);
    expect(streamSha256).toBe(sha(stream));
    expect(holdoutSha256).toBe(sha(corpus.holdout));
    // The stream never reaches into the holdout.
    expect(corpus.holdout.includes(stream.subarray(0, 64))).toBe(false);
  });

  it("slices the first token_budget bytes outside the holdout, wherever the holdout sits", async () => {
    const end = sliceCorpus(await loadCorpus(corpusDir("abcdefghijklmnop")), 6);
    expect(end.stream.toString()).toBe("abcdef");
    expect(end.holdout.toString()).toBe("mnop");
    const middle = await loadCorpus(
      corpusDir("abcdefghijklmnop", { holdout: { offset: 4, length: 4 } }),
    );
    expect(middle.holdout.toString()).toBe("efgh");
    expect(sliceCorpus(middle, 10).stream.toString()).toBe("abcdijklmn");
    expect(sliceCorpus(middle, 12).stream.toString()).toBe("abcdijklmnop");
    const short = sliceCorpus(middle, 6, { holdoutBytes: 2 });
    expect(short.holdout.toString()).toBe("ef");
    expect(short.holdoutSha256).toBe(sha(Buffer.from("ef")));
    expect(sliceCorpus(middle, 6, { holdoutBytes: 100 }).holdout.toString()).toBe("efgh");
    expect(() => sliceCorpus(middle, 6, { holdoutBytes: 0 })).toThrow(/holdoutBytes/);
  });

  it("reads an uncompressed corpus file too", async () => {
    const corpus = await loadCorpus(corpusDir("plain text corpus", {}, "corpus.txt"));
    expect(corpus.training.toString()).toBe("plain text co");
  });

  it("refuses a corpus whose bytes do not match the pinned sha256, saying so", async () => {
    const dir = corpusDir("abcdefghijklmnop", { sha256: "0".repeat(64) });
    await expect(loadCorpus(dir)).rejects.toThrow(CorpusError);
    await expect(loadCorpus(dir)).rejects.toThrow(
      /has sha256 [0-9a-f]{64}, but corpus.json pins 0{64}: it was changed or damaged/,
    );
  });

  it("refuses a wrong length, a bad manifest, a holdout that does not fit, a missing file", async () => {
    const longer = corpusDir("abcdefghijklmnop", { bytes: 10, holdout: { offset: 8, length: 2 } });
    await expect(loadCorpus(longer)).rejects.toThrow(
      /holds more than the 10 bytes corpus.json pins/,
    );
    const plainLonger = corpusDir(
      "abcdefghijklmnop",
      { bytes: 10, holdout: { offset: 8, length: 2 } },
      "c.txt",
    );
    await expect(loadCorpus(plainLonger)).rejects.toThrow(/holds 16 bytes; corpus.json pins 10/);
    await expect(loadCorpus(corpusDir("abcdefghijklmnop", { bytes: 20 }))).rejects.toThrow(
      /holds 16 bytes; corpus.json pins 20/,
    );
    await expect(
      loadCorpus(corpusDir("abcdefghijklmnop", { file: "../etc/passwd" })),
    ).rejects.toThrow(/not a corpus manifest: \/file/);
    await expect(
      loadCorpus(corpusDir("abcdefghijklmnop", { holdout: { offset: 14, length: 4 } })),
    ).rejects.toThrow(/does not fit in 16 bytes/);
    await expect(
      loadCorpus(corpusDir("abcdefghijklmnop", { file: "other.txt.gz" })),
    ).rejects.toThrow(/cannot read the corpus .*other\.txt\.gz/);
    await expect(loadCorpus(join(tmpdir(), "no-such-corpus-dir"))).rejects.toThrow(
      /cannot read .*corpus\.json/,
    );
  });

  it("refuses a token budget larger than the training bytes", async () => {
    const corpus = await loadCorpus(corpusDir("abcdefghijklmnop"));
    expect(() => sliceCorpus(corpus, 13)).toThrow(
      /the token budget 13 exceeds the corpus's 12 training bytes/,
    );
    expect(() => sliceCorpus(corpus, 1)).toThrow(/whole number >= 2/);
  });
});
