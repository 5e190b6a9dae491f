import { describe, expect, it } from "vitest";
import { RawRequestHeaders } from "./_raw-request-headers.js";

// The web Headers core's node adapter builds from the same raw list: the reference.
function webHeaders(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

function entries(reader: {
  forEach(callback: (value: string, name: string) => void): void;
}): string[][] {
  const out: string[][] = [];
  reader.forEach((value, name) => {
    out.push([name, value]);
  });
  return out;
}

const RAW = [
  "Host",
  "127.0.0.1:8080",
  "X-Dup",
  "a",
  "x-dup",
  "b",
  "Set-Cookie",
  "s=1",
  "set-cookie",
  "t=2",
  "Connection",
  "keep-alive, X-Hop",
  "X-Padded",
  " \t spaced \t ",
  "x-request-id",
  "one",
  "X-Request-Id",
  "two",
  "Accept",
  "*/*",
  "__proto__",
  "odd",
];

describe("RawRequestHeaders", () => {
  it("reads a node request's raw headers exactly as the web Headers built from them", () => {
    const raw = new RawRequestHeaders(RAW);
    const web = webHeaders(RAW);
    for (const name of ["x-dup", "X-DUP", "set-cookie", "x-padded", "x-request-id", "missing"])
      expect([name, raw.get(name)]).toEqual([name, web.get(name)]);
    expect(entries(raw)).toEqual(entries(web));
    expect(raw.has("accept")).toBe(true);
    expect(raw.has("content-length")).toBe(false);
  });

  it("answers a first get of Set-Cookie before anything else was read", () => {
    expect(new RawRequestHeaders(RAW).get("set-cookie")).toBe("s=1, t=2");
  });
});
