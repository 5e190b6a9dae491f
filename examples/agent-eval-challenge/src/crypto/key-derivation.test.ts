import { type ChildProcess, spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "@platform/challenge-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  deriveKey,
  GENERATED_KEY_FILE_NAME,
  KeyLabel,
  loadSecretKey,
  SECRET_KEY_BYTES,
} from "./key-derivation.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-eval-key-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function configErrorOf(action: Promise<unknown>): Promise<ConfigError> {
  const error = await action.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe("loadSecretKey from SECRET_KEY_FILE", () => {
  const key = Buffer.from(
    "6a0c2f8e9d14b3a7c5e1f0d2b4a69788112233445566778899aabbccddeeff00",
    "hex",
  );

  it.each([
    ["32 raw bytes", key],
    ["64 lower-case hex characters", Buffer.from(key.toString("hex"))],
    [
      "64 upper-case hex characters and a newline",
      Buffer.from(`${key.toString("hex").toUpperCase()}\n`),
    ],
    ["base64 with padding and CRLF", Buffer.from(`${key.toString("base64")}\r\n`)],
    ["base64 without padding", Buffer.from(key.toString("base64").replace(/=$/, ""))],
    ["base64url", Buffer.from(` ${key.toString("base64url")}\n`)],
  ])("reads %s", async (_label, content) => {
    const path = join(dir, "key");
    await writeFile(path, content);
    expect((await loadSecretKey({ path, dataDir: dir, production: true })).equals(key)).toBe(true);
    // A file was given: nothing is generated in the data directory.
    expect(await readdir(dir)).toEqual(["key"]);
  });

  it("takes any 32 raw bytes as the raw form, even bytes that look like text", async () => {
    const textual = Buffer.from("0123456789abcdef0123456789abcdef");
    const path = join(dir, "key");
    await writeFile(path, textual);
    expect((await loadSecretKey({ path, dataDir: dir, production: false })).equals(textual)).toBe(
      true,
    );
  });

  it.each([
    ["an empty file", Buffer.alloc(0)],
    ["31 raw bytes", randomBytes(31)],
    ["33 raw bytes", randomBytes(33)],
    ["32 raw bytes and a newline", Buffer.concat([randomBytes(32), Buffer.from("\n")])],
    ["62 hex characters", Buffer.from("ab".repeat(31))],
    ["66 hex characters", Buffer.from("ab".repeat(33))],
    ["hex with a non-hex character", Buffer.from(`${"ab".repeat(31)}zz`)],
    ["base64 of 31 bytes", Buffer.from(randomBytes(31).toString("base64"))],
    ["base64 with non-zero spare bits", Buffer.from(`${"A".repeat(42)}B=`)],
    ["base64 mixing both alphabets", Buffer.from(`${"A".repeat(41)}-+=`)],
    ["a passphrase", Buffer.from("correct horse battery staple, the secret\n")],
    ["a huge file", Buffer.alloc(1 << 20, 0x61)],
    ["an all-zero key", Buffer.alloc(32)],
  ])("refuses %s, naming the file and never its content", async (_label, content) => {
    const path = join(dir, "bad-key");
    await writeFile(path, content);
    const error = await configErrorOf(loadSecretKey({ path, dataDir: dir, production: false }));
    expect(error.message).toContain("SECRET_KEY_FILE");
    expect(error.message).toContain(path);
    const text = content.toString("latin1").trim();
    if (text.length >= 8) expect(error.message).not.toContain(text.slice(0, 8));
    expect(error.message).not.toContain(content.toString("hex").slice(0, 16) || "\u0000never");
  });

  it("refuses a missing file with the file's name", async () => {
    const path = join(dir, "absent");
    const error = await configErrorOf(loadSecretKey({ path, dataDir: dir, production: true }));
    expect(error.message).toContain(path);
    expect(error.message).toContain("ENOENT");
  });

  it("stops reading an endless file instead of hanging", async () => {
    const error = await configErrorOf(
      loadSecretKey({ path: "/dev/zero", dataDir: dir, production: true }),
    );
    expect(error.message).toContain("/dev/zero");
  });
});

describe("loadSecretKey without a file", () => {
  it("refuses to start in production and says to set SECRET_KEY_FILE", async () => {
    const error = await configErrorOf(loadSecretKey({ dataDir: dir, production: true }));
    expect(error.message).toContain("SECRET_KEY_FILE");
    expect(error.issues[0]?.variable).toBe("SECRET_KEY_FILE");
    expect(await readdir(dir)).toEqual([]);
    await configErrorOf(loadSecretKey({ path: "", dataDir: dir, production: true }));
  });

  it("generates a private key file in development and reuses it", async () => {
    const dataDir = join(dir, "nested", "data");
    const first = await loadSecretKey({ dataDir, production: false });
    expect(first).toHaveLength(SECRET_KEY_BYTES);
    const path = join(dataDir, GENERATED_KEY_FILE_NAME);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dataDir)).toEqual([GENERATED_KEY_FILE_NAME]);
    const second = await loadSecretKey({ dataDir, production: false });
    expect(second.equals(first)).toBe(true);
    // The generated file is a valid SECRET_KEY_FILE for the same key.
    expect((await loadSecretKey({ path, dataDir: dir, production: true })).equals(first)).toBe(
      true,
    );
    // Another data directory gets another key.
    const other = await loadSecretKey({ dataDir: join(dir, "other"), production: false });
    expect(other.equals(first)).toBe(false);
  });

  it("refuses, naming the data directory, when the key cannot be created there", async () => {
    await writeFile(join(dir, "not-a-directory"), "x");
    const dataDir = join(dir, "not-a-directory", "data");
    const error = await configErrorOf(loadSecretKey({ dataDir, production: false }));
    expect(error.message).toContain("SECRET_KEY_FILE");
    expect(error.message).toContain(dataDir);
  });

  it("refuses a damaged generated key instead of silently replacing it", async () => {
    const path = join(dir, GENERATED_KEY_FILE_NAME);
    await writeFile(path, "half-a-key\n");
    const error = await configErrorOf(loadSecretKey({ dataDir: dir, production: false }));
    expect(error.message).toContain(path);
    expect(await readdir(dir)).toEqual([GENERATED_KEY_FILE_NAME]);
  });

  it("agrees on one key when many loads race in one process", async () => {
    const keys = await Promise.all(
      Array.from({ length: 32 }, () => loadSecretKey({ dataDir: dir, production: false })),
    );
    const distinct = new Set(keys.map((key) => key.toString("hex")));
    expect(distinct.size).toBe(1);
    expect(await readdir(dir)).toEqual([GENERATED_KEY_FILE_NAME]);
  });

  it("agrees on one key when separate processes race", async () => {
    const module = fileURLToPath(new URL("./key-derivation.ts", import.meta.url));
    // Each child loads the module, says "ready", and only creates the key on "go", so the
    // creations really overlap (with this process's own loads) instead of being serialised by
    // process start-up time. Two children: each costs a TypeScript start-up of ~2 s.
    const script = `
      const { loadSecretKey } = await import(${JSON.stringify(module)});
      process.stdout.write("ready\\n");
      process.stdin.once("data", async () => {
        const load = () => loadSecretKey({ dataDir: process.argv[1], production: false });
        const keys = await Promise.all(Array.from({ length: 8 }, load));
        for (const key of keys) process.stdout.write("key " + key.toString("hex") + "\\n");
        process.exit(0);
      });`;
    const children = Array.from({ length: 2 }, () =>
      spawn(
        process.execPath,
        [
          "--conditions=@platform/source",
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          script,
          dir,
        ],
        {
          cwd: fileURLToPath(new URL("../..", import.meta.url)),
          stdio: ["pipe", "pipe", "inherit"],
        },
      ),
    );
    const outputs = children.map((child) => collectOutput(child));
    await Promise.all(outputs.map((output) => output.ready));
    for (const child of children) child.stdin?.write("go\n");
    const local = Array.from({ length: 8 }, () =>
      loadSecretKey({ dataDir: dir, production: false }),
    );
    const texts = await Promise.all(outputs.map((output) => output.done));
    const keys = texts.flatMap((text) =>
      [...text.matchAll(/key ([0-9a-f]{64})/g)].map((match) => match[1]),
    );
    expect(keys).toHaveLength(16);
    for (const key of await Promise.all(local)) keys.push(key.toString("hex"));
    expect(new Set(keys).size).toBe(1);
    // No temporary file is left behind by the losers.
    expect(await readdir(dir)).toEqual([GENERATED_KEY_FILE_NAME]);
  }, 30_000);
});

/** A child's stdout: `ready` once it printed "ready", `done` with all of it once it exited 0. */
function collectOutput(child: ChildProcess): { ready: Promise<void>; done: Promise<string> } {
  let text = "";
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    if (text.includes("ready\n")) markReady();
  });
  const done = new Promise<string>((resolve, reject) => {
    child.on("exit", (code) =>
      code === 0 ? resolve(text) : reject(new Error(`child exited with ${code}`)),
    );
  });
  return { ready, done };
}

describe("deriveKey", () => {
  const master = Buffer.from(
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    "hex",
  );

  it("gives a distinct 32-byte key per label, none equal to the master", () => {
    const labels = Object.values(KeyLabel);
    expect(labels).toHaveLength(9);
    const keys = labels.map((label) => deriveKey(master, label).toString("hex"));
    expect(new Set(keys).size).toBe(labels.length);
    for (const key of keys) {
      expect(key).toHaveLength(SECRET_KEY_BYTES * 2);
      expect(key).not.toBe(master.toString("hex"));
    }
  });

  it("is deterministic and depends on the master", () => {
    expect(
      deriveKey(master, KeyLabel.cursor).equals(deriveKey(Buffer.from(master), KeyLabel.cursor)),
    ).toBe(true);
    const otherMaster = Buffer.from(master);
    otherMaster[31] = (otherMaster[31] ?? 0) ^ 1;
    expect(deriveKey(otherMaster, KeyLabel.cursor).equals(deriveKey(master, KeyLabel.cursor))).toBe(
      false,
    );
  });

  it("is RFC 5869 HKDF-SHA256 with the fixed salt and the label as info (pinned)", () => {
    // An independent HKDF (extract, then one expand block): a change of salt, hash or label
    // would orphan every stored token hash, cursor and ciphertext, so it must fail a test.
    const hmac = (key: Uint8Array, data: Uint8Array) =>
      createHmac("sha256", key).update(data).digest();
    const prk = hmac(Buffer.from("platform/agent-eval-challenge/hkdf-salt/v1"), master);
    for (const label of Object.values(KeyLabel)) {
      const okm = hmac(prk, Buffer.concat([Buffer.from(label), Buffer.from([1])]));
      expect(deriveKey(master, label).equals(okm)).toBe(true);
    }
    expect(KeyLabel.reviewToken).toBe("agent-eval/review-token/v1");
  });

  it("refuses a master key of the wrong length", () => {
    expect(() => deriveKey(Buffer.alloc(16, 1), KeyLabel.telemetry)).toThrow(RangeError);
  });
});
