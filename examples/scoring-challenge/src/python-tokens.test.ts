import { describe, expect, it } from "vitest";
import { pythonTokens } from "./python-tokens.js";

const texts = (source: string) =>
  pythonTokens(source).map((token) => `${token.kind}:${token.text}`);

describe("pythonTokens", () => {
  it("keeps keywords, names, numbers and operators; drops comments and whitespace", () => {
    expect(texts("def f(x):  # square it\n    return x ** 2.5e-3 // 0x1F\n")).toEqual([
      "keyword:def",
      "name:f",
      "op:(",
      "name:x",
      "op:)",
      "op::",
      "keyword:return",
      "name:x",
      "op:**",
      "number:2.5e-3",
      "op://",
      "number:0x1F",
    ]);
  });

  it("reads every string form as one token, whatever it holds", () => {
    const source = [
      `a = "x # not a comment"`,
      `b = 'it\\'s'`,
      `c = rb"\\d+"`,
      `d = f"{a}"`,
      `e = """multi`,
      `line ' " # still string"""`,
      `g = '''x'''`,
    ].join("\n");
    const kinds = pythonTokens(source).map((token) => token.kind);
    expect(kinds.filter((kind) => kind === "string")).toHaveLength(6);
    expect(kinds.filter((kind) => kind === "name").length).toBe(6);
  });

  it("tells a prefix from a name and an attribute dot from a number", () => {
    expect(texts("rb = f; x.y = .5; z = 1.")).toEqual([
      "name:rb",
      "op:=",
      "name:f",
      "op:;",
      "name:x",
      "op:.",
      "name:y",
      "op:=",
      "number:.5",
      "op:;",
      "name:z",
      "op:=",
      "number:1.",
    ]);
  });

  it("never throws on garbage and stays linear on long inputs", () => {
    expect(() => pythonTokens('"unterminated\n$ ` \\ \u0000 é = 1')).not.toThrow();
    const long = `x = "${"a".repeat(500_000)}\n${"(".repeat(200_000)}`;
    const started = performance.now();
    expect(pythonTokens(long).length).toBe(200_003);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
