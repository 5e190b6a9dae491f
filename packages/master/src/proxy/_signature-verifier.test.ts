import {
  createLogger,
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  type Sr25519Keypair,
  signRequest,
  type VerifySignedRequestInput,
} from "@platform/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSignatureVerifier, type SignatureVerifier } from "./_signature-verifier.js";

const PATH = "/v1/challenges/live/submissions";

describe("the upload route's signature verifier", () => {
  let miner: Sr25519Keypair;
  let other: Sr25519Keypair;
  const opened: SignatureVerifier[] = [];
  const lines: string[] = [];
  const log = createLogger({ name: "test", level: "warn", write: (line) => lines.push(line) });

  beforeAll(async () => {
    await initCrypto();
    miner = keypairFromMnemonic(generateMnemonic());
    other = keypairFromMnemonic(generateMnemonic());
  });
  afterAll(async () => {
    for (const verifier of opened) await verifier.close();
  });

  const open = (workers: number) => {
    const verifier = createSignatureVerifier(workers, log);
    opened.push(verifier);
    return verifier;
  };
  const request = (body: string, tamper?: (headers: Record<string, string>) => void) => {
    const headers = signRequest(miner, {
      method: "POST",
      url: PATH,
      body,
      slug: "live",
    }) as unknown as Record<string, string>;
    tamper?.(headers);
    return { headers, method: "POST", pathWithQuery: PATH, body, slug: "live" };
  };
  /** Good requests and each kind of forgery, with the code the main thread gives them. */
  const cases = (): [string, VerifySignedRequestInput, string | null][] => [
    ["a good request", request("payload"), null],
    ["a tampered body", { ...request("payload"), body: "payloaD" }, "bad_signature"],
    [
      "another hotkey",
      request("payload", (h) => {
        h["X-Hotkey"] = other.address;
      }),
      "bad_signature",
    ],
    [
      "a malformed signature",
      request("payload", (h) => {
        h["X-Signature"] = "0x1234";
      }),
      "malformed_signature",
    ],
    [
      "no nonce",
      request("payload", (h) => {
        delete h["X-Nonce"];
      }),
      "missing_signature_headers",
    ],
    ["another good request", request("another payload"), null],
  ];
  const codeOf = (result: Awaited<ReturnType<SignatureVerifier["check"]>>) =>
    result.ok ? null : result.code;

  it("checks on the main thread with no workers", async () => {
    const verifier = open(0);
    expect(await verifier.pooled()).toBe(false);
    for (const [label, input, code] of cases())
      expect(codeOf(await verifier.check(input)), label).toBe(code);
  });

  it("checks on a pool with workers, with the main thread's verdicts, in flight together", async () => {
    const verifier = open(2);
    expect(await verifier.pooled()).toBe(true);
    const all = [...cases(), ...cases(), ...cases()];
    const results = await Promise.all(all.map(([, input]) => verifier.check(input)));
    expect(results.map(codeOf)).toEqual(all.map(([, , code]) => code));
    const good = results.find((r) => r.ok);
    expect(good).toMatchObject({ ok: true, hotkey: miner.address });
  });

  it("keeps answering on the main thread once closed, even for checks already in flight", async () => {
    const verifier = open(2);
    expect(await verifier.pooled()).toBe(true);
    const inFlight = cases().map(([, input]) => verifier.check(input));
    await verifier.close();
    expect((await Promise.all(inFlight)).map(codeOf)).toEqual(cases().map(([, , code]) => code));
    expect(await verifier.pooled()).toBe(false);
    for (const [label, input, code] of cases())
      expect(codeOf(await verifier.check(input)), label).toBe(code);
  });

  it("falls back to the main thread, and says so, when the pool cannot start", async () => {
    lines.length = 0;
    // A fractional size is refused by createVerifyPool: the real failure path, no stub.
    const verifier = open(1.5);
    expect(await verifier.pooled()).toBe(false);
    for (const [label, input, code] of cases())
      expect(codeOf(await verifier.check(input)), label).toBe(code);
    expect(lines.some((line) => /verify pool could not start/.test(line))).toBe(true);
  });
});
