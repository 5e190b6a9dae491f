import { describe, expect, it } from "vitest";
import { leastCpuMicros } from "../test/cpu-cost.js";
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

  it("keeps each string's source text, prefix and quotes included", () => {
    const source = `a = rb"\\d+" + 'x' + """doc\n"""`;
    const strings = pythonTokens(source).filter((token) => token.kind === "string");
    expect(strings.map((token) => token.text)).toEqual([`rb"\\d+"`, `'x'`, `"""doc\n"""`]);
  });

  it("reads non-ASCII names whole, and ASCII names that continue in other scripts", () => {
    expect(texts("é_1 = x𝔘y + ℕ")).toEqual(["name:é_1", "op:=", "name:x𝔘y", "op:+", "name:ℕ"]);
  });

  it("marks where each logical line starts and its indentation, as Python joins lines", () => {
    const source = [
      "def f(a,", // brackets join the next line
      "      b):  # a comment",
      "    x = [1,",
      "  2]",
      "    y = 1 + \\", // a backslash joins the next line
      "        2",
      "",
      "\tif x:", // a tab is 8 columns
      "\t    z = '''a",
      "b'''; w = 1", // a string spans lines; `;` does not start a line
      "# only a comment",
      "\fq = 1", // a form feed resets the column
    ].join("\n");
    const starts = pythonTokens(source)
      .filter((token) => token.indent >= 0)
      .map((token) => `${token.text}@${token.indent}`);
    expect(starts).toEqual(["def@0", "x@4", "y@4", "if@8", "z@12", "q@0"]);
    // Unbalanced closing brackets never make the depth negative: the next line still starts.
    const unbalanced = pythonTokens(")\nx = 1").filter((token) => token.indent >= 0);
    expect(unbalanced.map((token) => token.text)).toEqual([")", "x"]);
  });

  it("never throws on garbage", () => {
    expect(() => pythonTokens('"unterminated\n$ ` \\ \u0000 é = 1')).not.toThrow();
    expect(() => pythonTokens(")))]]}}\n\t\t(\n\\")).not.toThrow();
  });

  it("stays linear: eight times the input takes far less than 64 times as long", () => {
    const input = (n: number) =>
      `x = "${"a".repeat(n)}\n${"(".repeat(n)}\n${"name_1 = 2.5e3\n".repeat(n / 10)}`;
    const cost = (n: number) => {
      const text = input(n);
      return leastCpuMicros(() => {
        expect(pythonTokens(text).length).toBe(3 + n + (n / 10) * 3);
      });
    };
    const small = cost(12_500);
    const large = cost(100_000);
    // Linear is 8 times, quadratic 64; the 1 ms floor keeps a very fast small run from deciding.
    expect(large / Math.max(small, 1000)).toBeLessThan(24);
  });
});
