import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  canonicalRequestMessage,
  REQUEST_MESSAGE_VERSION,
  sha256Hex,
} from "./canonical-message.js";

// The same vectors are printed in docs/protocol/signing.md; change both or neither.
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const POST_PARTS = {
  method: "post",
  path: "/challenges/agent-eval/submissions?z=1&a=b+c&b=%7Ex&empty",
  slug: "agent-eval",
  timestamp: 1795262400,
  nonce: "n0nce-0123456789abcdef",
  body: '{"name":"demo"}',
};
const POST_MESSAGE =
  "platform-request-v1\n" +
  "POST\n" +
  "/challenges/agent-eval/submissions?a=b%20c&b=~x&empty=&z=1\n" +
  "agent-eval\n" +
  "1795262400\n" +
  "n0nce-0123456789abcdef\n" +
  "d7d234f759ec34fd6298b7e32318614760070aaef9f4e92ced928324b49a0602";
const POST_HASH = "d01ccbb39db036fbcd6baaa19c03e0c8dc7d17362f0a4ff716e255bffeee7ac8";
const GET_MESSAGE =
  "platform-request-v1\nGET\n/v1/weights/latest\n-\n1795262400\nn0nce-0123456789abcdef\n" +
  EMPTY_SHA256;
const GET_HASH = "917d4b2da062271cca02b7bfc523c32a1af58eba6f9fd8f7d60c27c058f9d001";

const base = { method: "GET", path: "/x", timestamp: 1, nonce: "0123456789abcdef" };
const target = (path: string) => canonicalRequestMessage({ ...base, path }).split("\n")[2];

describe("sha256Hex", () => {
  it("hashes exact bytes and UTF-8 strings alike", () => {
    expect(sha256Hex("")).toBe(EMPTY_SHA256);
    expect(sha256Hex(new Uint8Array())).toBe(EMPTY_SHA256);
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex(new TextEncoder().encode("é"))).toBe(sha256Hex("é"));
  });
});

describe("canonicalRequestMessage", () => {
  it("matches the documented POST vector byte for byte", () => {
    const message = canonicalRequestMessage(POST_PARTS);
    expect(message).toBe(POST_MESSAGE);
    expect(message.startsWith(`${REQUEST_MESSAGE_VERSION}\n`)).toBe(true);
    expect(message.endsWith("\n")).toBe(false);
    expect(sha256Hex(message)).toBe(POST_HASH);
  });

  it("matches the documented GET vector: no slug is `-`, no body is sha256 of nothing", () => {
    const message = canonicalRequestMessage({
      method: "GET",
      path: "/v1/weights/latest",
      timestamp: 1795262400,
      nonce: "n0nce-0123456789abcdef",
    });
    expect(message).toBe(GET_MESSAGE);
    expect(sha256Hex(message)).toBe(GET_HASH);
  });

  it("accepts a precomputed body hash in place of the body", () => {
    const { body, ...rest } = POST_PARTS;
    expect(canonicalRequestMessage({ ...rest, bodySha256: sha256Hex(body) })).toBe(POST_MESSAGE);
    expect(() => canonicalRequestMessage({ ...rest, bodySha256: "ABC" })).toThrow(TypeError);
  });

  it("sorts the query by key then value and re-encodes with RFC 3986", () => {
    expect(target("/x?b=2&a=1")).toBe("/x?a=1&b=2");
    expect(target("/x?a=2&a=10&a=1")).toBe("/x?a=1&a=10&a=2"); // strings, not numbers
    expect(target("/x?q=a+b")).toBe("/x?q=a%20b");
    expect(target("/x?q=a%2Bb")).toBe("/x?q=a%2Bb");
    expect(target("/x?%41=%7e")).toBe("/x?A=~");
    expect(target("/x?k=%e2%82%ac&k=%zz&%41=1&k=é!*'()")).toBe(
      "/x?A=1&k=%25zz&k=%C3%A9%21%2A%27%28%29&k=%E2%82%AC",
    );
    expect(target("/x?flag")).toBe("/x?flag=");
  });

  it("drops an empty query entirely", () => {
    expect(target("/x?")).toBe("/x");
    expect(target("/x?&&")).toBe("/x");
    expect(target("/x")).toBe("/x");
  });

  it("keeps the path verbatim", () => {
    expect(target("/a//b/%7Ec/./d")).toBe("/a//b/%7Ec/./d");
    expect(target("/A")).not.toBe(target("/a"));
  });

  it("refuses parts that cannot be on the wire", () => {
    const bad = [
      { path: "relative" },
      { path: "/a b" },
      { path: "/a\nb" },
      { path: "/a#frag" },
      { path: "/x?a=1#frag" },
      { path: "/é" },
      { method: "GE T" },
      { method: "" },
      { slug: "-" },
      { slug: "Upper" },
      { slug: "a\nb" },
      { slug: "a" }, // one character: the spec's rule needs two
      { slug: "a".repeat(64) },
      { timestamp: 1.5 },
      { timestamp: -1 },
      { nonce: "short" },
      { nonce: "0123456789abcdef\n" },
    ];
    for (const override of bad) {
      expect(
        () => canonicalRequestMessage({ ...base, ...override }),
        JSON.stringify(override),
      ).toThrow(TypeError);
    }
  });

  it("upper-cases the method", () => {
    expect(canonicalRequestMessage({ ...base, method: "delete" }).split("\n")[1]).toBe("DELETE");
  });
});

describe("docs/protocol/signing.md", () => {
  const doc = readFileSync(
    new URL("../../../../docs/protocol/signing.md", import.meta.url),
    "utf8",
  );

  it("prints the repeated-key vector: one message for both orders", () => {
    const parts = {
      ...POST_PARTS,
      path: "/challenges/agent-eval/submissions?filename=good.zip&filename=evil.zip",
    };
    const message = canonicalRequestMessage(parts);
    expect(
      canonicalRequestMessage({
        ...parts,
        path: "/challenges/agent-eval/submissions?filename=evil.zip&filename=good.zip",
      }),
    ).toBe(message);
    expect(doc).toContain(`\`\`\`\n${message}\n\`\`\``);
    expect(doc).toContain(`requestHash: \`${sha256Hex(message)}\``);
  });

  it("prints the same message vectors and hashes the tests assert", () => {
    expect(doc).toContain(`\`\`\`\n${POST_MESSAGE}\n\`\`\``);
    expect(doc).toContain(`\`\`\`\n${GET_MESSAGE}\n\`\`\``);
    expect(doc).toContain(`requestHash: \`${POST_HASH}\``);
    expect(doc).toContain(`requestHash: \`${GET_HASH}\``);
  });

  it("has a query table whose every row holds", () => {
    const rows = [...doc.matchAll(/^\| `([^`]*)`(?: and `([^`]*)`)? \| `([^`]*)` \|$/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(7);
    for (const [, sent, alsoSent, signed] of rows) {
      expect(target(sent!)).toBe(signed);
      if (alsoSent) expect(target(alsoSent)).toBe(signed);
    }
  });
});
