/**
 * The pinned evaluation corpus (corpus/corpus.json + its gzipped text): loaded once, verified
 * against its sha256, and sliced per run into the stream a bundle trains on (the first
 * token_budget bytes outside the holdout) and the holdout it never sees. Each slice travels to
 * the harness with its own sha256, which the harness checks before reading a byte.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import { type Static, Type } from "@platform/challenge-sdk";
import { TypeCompiler } from "@sinclair/typebox/compiler";

/** The corpus shipped with this package: 5 MB, small enough to carry; development only. */
export const DEFAULT_CORPUS_DIR = new URL("../corpus/", import.meta.url);
/** Where corpus/build-pool.sh writes the public pool built from Debian packages (not in git). */
export const DEFAULT_POOL_DIR = new URL("../corpus/pool/", import.meta.url);

/** Which pool a challenge instance draws its scored bytes from. */
export interface PoolChoice {
  dir: URL | string;
  /** private: the operator's CORPUS_DIR; public: the built pool; pinned: the small shipped corpus. */
  kind: "private" | "public" | "pinned";
}

/** CORPUS_DIR when set, else the built public pool when it is there, else the pinned corpus. */
export function choosePool(configured: string | null): PoolChoice {
  if (configured !== null) return { dir: configured, kind: "private" };
  if (existsSync(new URL("corpus.json", DEFAULT_POOL_DIR))) {
    return { dir: DEFAULT_POOL_DIR, kind: "public" };
  }
  return { dir: DEFAULT_CORPUS_DIR, kind: "pinned" };
}

/** corpus/corpus.json. */
export const CorpusManifest = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  // A plain name inside the corpus directory.
  file: Type.String({ pattern: "^[A-Za-z0-9_][A-Za-z0-9_.-]*$" }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  bytes: Type.Integer({ minimum: 2 }),
  holdout: Type.Object({
    offset: Type.Integer({ minimum: 0 }),
    length: Type.Integer({ minimum: 1 }),
  }),
});
export type CorpusManifest = Static<typeof CorpusManifest>;

/** A loaded, verified corpus. */
export interface Corpus {
  version: number;
  sha256: string;
  data: Buffer;
  holdout: Buffer;
  holdoutSha256: string;
  /** The bytes a bundle may ever train on: the corpus without its holdout. */
  training: Buffer;
}

/** What one run gets: its stream and the holdout, each with the sha256 run.json pins. */
export interface CorpusSlices {
  stream: Buffer;
  streamSha256: string;
  holdout: Buffer;
  holdoutSha256: string;
}

/** A corpus that cannot be used; the message says what is wrong and where. */
export class CorpusError extends Error {
  override name = "CorpusError";
}

const checkManifest = TypeCompiler.Compile(CorpusManifest);

/** Load and verify the corpus in `dir` (a folder URL or path). Throws CorpusError. */
export async function loadCorpus(dir: URL | string = DEFAULT_CORPUS_DIR): Promise<Corpus> {
  const base = typeof dir === "string" ? pathToFileURL(dir.endsWith("/") ? dir : `${dir}/`) : dir;
  const manifestUrl = new URL("corpus.json", base);
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(manifestUrl, "utf8"));
  } catch (error) {
    throw new CorpusError(`cannot read ${manifestUrl.pathname}: ${(error as Error).message}`);
  }
  if (!checkManifest.Check(manifest)) {
    const first = [...checkManifest.Errors(manifest)][0];
    throw new CorpusError(
      `${manifestUrl.pathname} is not a corpus manifest: ${first?.path || "/"}: ${first?.message}`,
    );
  }
  const { holdout, bytes } = manifest;
  if (holdout.offset + holdout.length > bytes || holdout.length >= bytes) {
    throw new CorpusError(
      `${manifestUrl.pathname}: the holdout [${holdout.offset}, ${holdout.offset + holdout.length}) does not fit in ${bytes} bytes with room to train`,
    );
  }
  const fileUrl = new URL(manifest.file, base);
  let data: Buffer;
  try {
    const packed = await readFile(fileUrl);
    // One byte of slack reveals a file longer than pinned, without ever inflating much past it.
    data = manifest.file.endsWith(".gz")
      ? gunzipSync(packed, { maxOutputLength: bytes + 1 })
      : packed;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw new CorpusError(
        `the corpus ${fileUrl.pathname} holds more than the ${bytes} bytes corpus.json pins`,
      );
    }
    throw new CorpusError(
      `cannot read the corpus ${fileUrl.pathname}: ${(error as Error).message}`,
    );
  }
  if (data.length !== bytes) {
    throw new CorpusError(
      `the corpus ${fileUrl.pathname} holds ${data.length} bytes; corpus.json pins ${bytes}`,
    );
  }
  const sha256 = sha256Hex(data);
  if (sha256 !== manifest.sha256) {
    throw new CorpusError(
      `the corpus ${fileUrl.pathname} has sha256 ${sha256}, but corpus.json pins ${manifest.sha256}: ` +
        "it was changed or damaged; scores would not be comparable, so it is refused",
    );
  }
  const held = data.subarray(holdout.offset, holdout.offset + holdout.length);
  const training =
    holdout.offset + holdout.length === bytes
      ? data.subarray(0, holdout.offset)
      : Buffer.concat([
          data.subarray(0, holdout.offset),
          data.subarray(holdout.offset + holdout.length),
        ]);
  return {
    version: manifest.version,
    sha256,
    data,
    holdout: held,
    holdoutSha256: sha256Hex(held),
    training,
  };
}

/**
 * The stream for a run of `tokenBudget` bytes (byte-level: one token, one byte) and the holdout,
 * or its first `holdoutBytes` bytes (scoring the whole holdout dominates a small run's time).
 */
export function sliceCorpus(
  corpus: Corpus,
  tokenBudget: number,
  options: { holdoutBytes?: number } = {},
): CorpusSlices {
  if (!Number.isSafeInteger(tokenBudget) || tokenBudget < 2) {
    throw new CorpusError(`the token budget must be a whole number >= 2, got ${tokenBudget}`);
  }
  if (tokenBudget > corpus.training.length) {
    throw new CorpusError(
      `the token budget ${tokenBudget} exceeds the corpus's ${corpus.training.length} training bytes (corpus version ${corpus.version})`,
    );
  }
  const stream = corpus.training.subarray(0, tokenBudget);
  const cut = options.holdoutBytes;
  if (cut !== undefined && (!Number.isSafeInteger(cut) || cut < 2)) {
    throw new CorpusError(`holdoutBytes must be a whole number >= 2, got ${cut}`);
  }
  const holdout =
    cut === undefined || cut >= corpus.holdout.length
      ? corpus.holdout
      : corpus.holdout.subarray(0, cut);
  return {
    stream,
    streamSha256: sha256Hex(stream),
    holdout,
    holdoutSha256: holdout === corpus.holdout ? corpus.holdoutSha256 : sha256Hex(holdout),
  };
}

/** sha256 of `data`, lowercase hex: how run.json pins every slice. */
export function sha256Hex(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
