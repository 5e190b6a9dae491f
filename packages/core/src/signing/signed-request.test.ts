import { readFileSync } from "node:fs";
import { u8aWrapBytes } from "@polkadot/util";
import { sr25519Sign } from "@polkadot/util-crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalRequestMessage, repeatedQueryKey, sha256Hex } from "./canonical-message.js";
import { initCrypto } from "./init-crypto.js";
import { keypairFromMnemonic, keypairFromSeed, type Sr25519Keypair } from "./keys.js";
import { isValidNonce } from "./nonce.js";
import {
  type SignatureHeaders,
  type SignedRequestResult,
  signedRequestStatus,
  signRequest,
  type VerifySignedRequestInput,
  verifySignedRequest,
} from "./signed-request.js";
import { encodeSs58 } from "./ss58.js";

const DEV_PHRASE = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
const T = 1795262400;
const NONCE = "n0nce-0123456789abcdef";
const BODY = '{"name":"demo"}';
const PATH = "/challenges/agent-eval/submissions?z=1&a=b+c&b=%7Ex&empty";
// Documented in docs/protocol/signing.md: headers signRequest produced for the POST vector.
const DOC_HEADERS: SignatureHeaders = {
  "X-Hotkey": "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV",
  "X-Signature":
    "0xde9b7c81dd3acf3e23c6916a12975abde8136b84f011946af9eb7032c09b726c" +
    "04267cf46fd9c59c30b66b56bf8b76301f0e0db6230c2e948e80e6c502156487",
  "X-Nonce": NONCE,
  "X-Timestamp": String(T),
};
const DOC_REQUEST_HASH = "d01ccbb39db036fbcd6baaa19c03e0c8dc7d17362f0a4ff716e255bffeee7ac8";

let pair: Sr25519Keypair;
let headers: SignatureHeaders;

beforeAll(async () => {
  await initCrypto();
  pair = keypairFromMnemonic(DEV_PHRASE);
  headers = signRequest(pair, {
    method: "POST",
    url: `https://master.example${PATH}`,
    body: BODY,
    slug: "agent-eval",
    timestamp: T,
    nonce: NONCE,
  });
});

function verify(overrides: Partial<VerifySignedRequestInput> = {}): SignedRequestResult {
  return verifySignedRequest({
    headers,
    method: "POST",
    pathWithQuery: PATH,
    body: new TextEncoder().encode(BODY),
    slug: "agent-eval",
    now: T,
    ...overrides,
  });
}

function code(result: SignedRequestResult): string {
  return result.ok ? "ok" : result.code;
}

describe("signRequest + verifySignedRequest", () => {
  it("accepts a valid request and reports what the receiver must store", () => {
    const result = verify();
    expect(result).toMatchObject({
      ok: true,
      hotkey: pair.address,
      nonce: NONCE,
      timestamp: T,
      requestHash: DOC_REQUEST_HASH,
    });
    if (result.ok) expect(result.publicKey).toEqual(pair.publicKey);
  });

  it("accepts the documented fixed headers", () => {
    const doc = readFileSync(
      new URL("../../../../docs/protocol/signing.md", import.meta.url),
      "utf8",
    );
    for (const [name, value] of Object.entries(DOC_HEADERS))
      expect(doc).toContain(`${name}: ${value}`);
    expect(verify({ headers: DOC_HEADERS })).toMatchObject({
      ok: true,
      requestHash: DOC_REQUEST_HASH,
    });
  });

  it("requestHash is sha256 of the canonical message", () => {
    const message = canonicalRequestMessage({
      method: "POST",
      path: PATH,
      slug: "agent-eval",
      timestamp: T,
      nonce: NONCE,
      body: BODY,
    });
    expect(verify()).toMatchObject({ requestHash: sha256Hex(message) });
  });

  it("accepts the query in another order or spelling, and an absolute URL", () => {
    expect(
      code(verify({ pathWithQuery: "/challenges/agent-eval/submissions?empty=&b=~x&z=1&a=b%20c" })),
    ).toBe("ok");
    expect(code(verify({ pathWithQuery: `http://10.0.0.5:8080${PATH}` }))).toBe("ok");
  });

  it("accepts a body hashed while streaming", () => {
    expect(code(verify({ body: undefined, bodySha256: sha256Hex(BODY) }))).toBe("ok");
  });

  it.each([
    ["body", { body: '{"name":"demo2"}' }],
    ["empty body", { body: undefined }],
    ["path", { pathWithQuery: PATH.replace("submissions", "submission") }],
    ["path case", { pathWithQuery: PATH.replace("agent-eval", "Agent-eval") }],
    ["query value", { pathWithQuery: PATH.replace("z=1", "z=2") }],
    ["added query parameter", { pathWithQuery: `${PATH}&extra=1` }],
    ["dropped query", { pathWithQuery: "/challenges/agent-eval/submissions" }],
    ["method", { method: "PUT" }],
    ["slug", { slug: "scoring" }],
    ["missing slug", { slug: undefined }],
    ["timestamp", { headers: { ...DOC_HEADERS, "X-Timestamp": String(T + 1) } }],
    ["nonce", { headers: { ...DOC_HEADERS, "X-Nonce": `${NONCE}x` } }],
  ] satisfies [string, Partial<VerifySignedRequestInput>][])(
    "rejects a tampered %s as bad_signature",
    (_, overrides) => {
      const result = verify(overrides);
      expect(result).toMatchObject({ ok: false, code: "bad_signature" });
    },
  );

  it("rejects a signature presented under another hotkey", () => {
    const other = keypairFromSeed(`0x${"22".repeat(32)}`);
    expect(code(verify({ headers: { ...headers, "X-Hotkey": other.address } }))).toBe(
      "bad_signature",
    );
  });

  it("rejects a malformed hotkey as invalid_hotkey", () => {
    const good = headers["X-Hotkey"];
    for (const hotkey of [
      `${good.slice(0, -1)}${good.endsWith("a") ? "b" : "a"}`, // bad checksum
      good.slice(0, -2), // wrong length
      "garbage!",
      `0x${Buffer.from(pair.publicKey).toString("hex")}`,
      encodeSs58(pair.publicKey, 0), // same key, another prefix: would dodge the nonce store
    ]) {
      expect(code(verify({ headers: { ...headers, "X-Hotkey": hotkey } })), hotkey).toBe(
        "invalid_hotkey",
      );
    }
  });

  it("canonicalises the hotkey to the required prefix", () => {
    const polkadot = signRequest(keypairFromMnemonic(DEV_PHRASE, { ss58Prefix: 0 }), {
      method: "GET",
      url: "/v1/x",
      timestamp: T,
      nonce: NONCE,
    });
    const input = { headers: polkadot, method: "GET", pathWithQuery: "/v1/x", now: T };
    expect(code(verifySignedRequest(input))).toBe("invalid_hotkey");
    expect(verifySignedRequest({ ...input, ss58Prefix: 0 })).toMatchObject({
      ok: true,
      hotkey: polkadot["X-Hotkey"],
    });
  });

  it("rejects missing or repeated headers", () => {
    for (const name of ["X-Hotkey", "X-Signature", "X-Nonce", "X-Timestamp"] as const) {
      const { [name]: _, ...rest } = headers;
      const result = verify({ headers: rest });
      expect(result).toMatchObject({ ok: false, code: "missing_signature_headers" });
      if (!result.ok) expect(result.message).toContain(name);
      expect(code(verify({ headers: { ...headers, [name]: "" } }))).toBe(
        "missing_signature_headers",
      );
    }
    const repeated = { ...headers, "X-Nonce": [NONCE, NONCE] };
    expect(code(verify({ headers: repeated }))).toBe("missing_signature_headers");
  });

  it("answers a header repeated on one line (fetch and node join with a comma) as missing", () => {
    // Issue 10 item 9: a repeated X-Nonce came back invalid_nonce.
    for (const name of ["X-Hotkey", "X-Signature", "X-Nonce", "X-Timestamp"] as const) {
      const joined = new Headers({ ...headers });
      joined.append(name, headers[name]);
      expect(code(verify({ headers: joined })), name).toBe("missing_signature_headers");
      const lower = { ...headers, [name]: `${headers[name]}, ${headers[name]}` };
      expect(code(verify({ headers: lower })), name).toBe("missing_signature_headers");
    }
  });

  it("refuses a repeated query key in any order and spelling (400 duplicate_query_key)", () => {
    // Issue 10 item 5: signed in one order, sent in the other, it verified.
    const signedPath = "/challenges/agent-eval/submissions?filename=good.zip&filename=evil.zip";
    const signed = signRequest(pair, {
      method: "POST",
      url: signedPath,
      body: BODY,
      slug: "agent-eval",
      timestamp: T,
      nonce: NONCE,
    });
    for (const path of [
      signedPath,
      "/challenges/agent-eval/submissions?filename=evil.zip&filename=good.zip",
      "/challenges/agent-eval/submissions?filename=good.zip&%66ilename=evil.zip",
      "/challenges/agent-eval/submissions?a&a",
    ]) {
      const result = verify({ headers: signed, pathWithQuery: path });
      expect(result, path).toMatchObject({ ok: false, code: "duplicate_query_key" });
      if (!result.ok) expect(signedRequestStatus(result.code)).toBe(400);
    }
    expect(signedRequestStatus("bad_signature")).toBe(401);
    expect(repeatedQueryKey("/x?a=1&b=2&c")).toBeNull();
  });

  it("reads a web Headers object and node's lower-cased header record", () => {
    expect(code(verify({ headers: new Headers({ ...headers }) }))).toBe("ok");
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(code(verify({ headers: lower }))).toBe("ok");
    expect(code(verify({ headers: { ...lower, "x-nonce": [NONCE] } }))).toBe("ok");
  });

  it("rejects a malformed signature, accepts bare and upper-case hex", () => {
    const sig = headers["X-Signature"];
    for (const bad of ["0x1234", `${sig}00`, `0x${"zz".repeat(64)}`, sig.slice(0, -1)]) {
      expect(code(verify({ headers: { ...headers, "X-Signature": bad } })), bad).toBe(
        "malformed_signature",
      );
    }
    expect(code(verify({ headers: { ...headers, "X-Signature": sig.slice(2) } }))).toBe("ok");
    expect(code(verify({ headers: { ...headers, "X-Signature": sig.toUpperCase() } }))).toBe("ok");
  });

  it("rejects a nonce outside the syntax", () => {
    for (const nonce of ["short", "a".repeat(129), "0123456789abcdef!", "0123456789 abcdef"]) {
      expect(code(verify({ headers: { ...headers, "X-Nonce": nonce } })), nonce).toBe(
        "invalid_nonce",
      );
    }
  });

  it("rejects a timestamp that is not integer unix seconds", () => {
    for (const ts of [`${T}.5`, `0${T}`, `-${T}`, "1.7e9", ` ${T}`, `${T}000000000`, "abc"]) {
      expect(code(verify({ headers: { ...headers, "X-Timestamp": ts } })), ts).toBe(
        "invalid_timestamp",
      );
    }
  });

  it("rejects expired and future timestamps, inclusive window edges pass", () => {
    expect(code(verify({ now: T + 300 }))).toBe("ok");
    expect(code(verify({ now: T - 300 }))).toBe("ok");
    const past = verify({ now: T + 301 });
    expect(past).toMatchObject({ ok: false, code: "timestamp_out_of_window" });
    if (!past.ok) expect(past.message).toMatch(/301 s in the past/);
    const future = verify({ now: T - 301 });
    expect(future).toMatchObject({ ok: false, code: "timestamp_out_of_window" });
    if (!future.ok) expect(future.message).toMatch(/in the future/);
    expect(code(verify({ now: T + 10, windowSeconds: 5 }))).toBe("timestamp_out_of_window");
    // Milliseconds by mistake are far in the future, not accepted.
    const ms = { ...headers, "X-Timestamp": String(T * 1000) };
    expect(code(verify({ headers: ms }))).toBe("timestamp_out_of_window");
  });

  it("uses the real clock by default", () => {
    const fresh = signRequest(pair, { method: "GET", url: "/v1/x" });
    expect(isValidNonce(fresh["X-Nonce"])).toBe(true);
    const input = { headers: fresh, method: "GET", pathWithQuery: "/v1/x" };
    expect(code(verifySignedRequest(input))).toBe("ok");
    expect(code(verify())).toBe("ok"); // pinned clock still honoured
    expect(code(verify({ now: undefined }))).toBe("timestamp_out_of_window");
  });

  it("refuses a request line that cannot be canonicalised", () => {
    expect(code(verify({ method: "GE T" }))).toBe("invalid_request");
    expect(code(verify({ pathWithQuery: "no-slash" }))).toBe("invalid_request");
    expect(code(verify({ slug: "Not A Slug" }))).toBe("invalid_request");
  });

  it("throws on settings that would disable the window", () => {
    expect(() => verify({ now: Number.NaN })).toThrow(TypeError);
    expect(() => verify({ windowSeconds: Number.NaN })).toThrow(TypeError);
    expect(() => verify({ windowSeconds: -1 })).toThrow(TypeError);
  });

  it("accepts the <Bytes>-wrapped signature a polkadot-js extension produces", () => {
    const message = canonicalRequestMessage({
      method: "POST",
      path: PATH,
      slug: "agent-eval",
      timestamp: T,
      nonce: NONCE,
      body: BODY,
    });
    const wrapped = sr25519Sign(u8aWrapBytes(new TextEncoder().encode(message)), pair);
    const extension = { ...headers, "X-Signature": `0x${Buffer.from(wrapped).toString("hex")}` };
    expect(code(verify({ headers: extension }))).toBe("ok");
    expect(code(verify({ headers: extension, body: "{}" }))).toBe("bad_signature");
  });

  it("signs the path fetch will send: WHATWG-normalised, repeated slashes kept", () => {
    const dots = signRequest(pair, {
      method: "get",
      url: "/a/./b/../c?y=2&x=1",
      timestamp: T,
      nonce: NONCE,
    });
    const input = { headers: dots, method: "GET", now: T };
    expect(code(verifySignedRequest({ ...input, pathWithQuery: "/a/c?x=1&y=2" }))).toBe("ok");
    const slashes = signRequest(pair, { method: "GET", url: "//a/b", timestamp: T, nonce: NONCE });
    expect(code(verifySignedRequest({ ...input, headers: slashes, pathWithQuery: "//a/b" }))).toBe(
      "ok",
    );
    const url = signRequest(pair, {
      method: "GET",
      url: new URL("https://h.example/p?q=1"),
      timestamp: T,
      nonce: NONCE,
    });
    expect(code(verifySignedRequest({ ...input, headers: url, pathWithQuery: "/p?q=1" }))).toBe(
      "ok",
    );
  });
});
