import { describe, expect, it } from "vitest";
import {
  assignmentTargets,
  definedName,
  parseStatements,
  readImport,
  type Statement,
} from "./python-statements.js";
import { type PythonToken, pythonTokens } from "./python-tokens.js";

/** Each statement as `kind:first-token` with its suite nested, for compact comparisons. */
function outline(source: string): unknown[] {
  const tokens = pythonTokens(source);
  const walk = (statements: Statement[]): unknown[] =>
    statements.map((s) => {
      const label = `${s.kind}:${tokens[s.head]!.text}`;
      return s.body.length > 0 ? [label, walk(s.body)] : label;
    });
  return walk(parseStatements(tokens));
}

/** The only statement of `source`, with its tokens. */
function single(source: string): { tokens: PythonToken[]; statement: Statement } {
  const tokens = pythonTokens(source);
  const [statement] = parseStatements(tokens);
  return { tokens, statement: statement! };
}

const targets = (source: string) => {
  const { tokens, statement } = single(source);
  return assignmentTargets(tokens, statement);
};

const imports = (source: string) => {
  const { tokens } = single(source);
  return readImport(tokens, 0, tokens.length)?.statement ?? null;
};

describe("parseStatements", () => {
  it("nests suites by indentation and keeps decorators with their definition", () => {
    const source = [
      "import torch",
      "@decorator",
      "@other(1)",
      "class A(torch.nn.Module):",
      "    x = 1",
      "    def f(self,",
      "          y):",
      "        return y",
      "if x:",
      "    pass",
      "else:",
      "    y = [1,",
      "2]",
      "async def g():",
      "    match x:",
      "        case 1:",
      "            pass",
    ].join("\n");
    expect(outline(source)).toEqual([
      "import:import",
      ["class:class", ["simple:x", ["def:def", ["simple:return"]]]],
      ["compound:if", ["simple:pass"]],
      ["compound:else", ["simple:y"]],
      ["def:async", [["compound:match", [["compound:case", ["simple:pass"]]]]]],
    ]);
    const tokens = pythonTokens(source);
    const decorated = parseStatements(tokens)[1]!;
    expect(tokens[decorated.start]!.text).toBe("@");
    expect(tokens[decorated.head]!.text).toBe("class");
    expect(definedName(tokens, decorated)).toBe("A");
  });

  it("reads one-line compound statements, `from` imports and `yield from` apart", () => {
    expect(outline("if x: y = 1\nfrom a import b\nraise E from e\n")).toEqual([
      "compound:if",
      "from:from",
      "simple:raise",
    ]);
  });

  it("keeps a suite deeper than Python allows as one unparsed statement, and never throws", () => {
    const deep = Array.from({ length: 150 }, (_, i) => `${" ".repeat(i)}if x:`).join("\n");
    let statements = parseStatements(pythonTokens(`${deep}\n${" ".repeat(150)}pass\n`));
    let depth = 0;
    while (statements[0]?.body.length) {
      statements = statements[0].body;
      depth++;
    }
    expect(depth).toBe(101);
    expect(() => parseStatements(pythonTokens("  x\ny\n    z\n  w\n@\n"))).not.toThrow();
    expect(parseStatements([])).toEqual([]);
  });
});

describe("assignmentTargets", () => {
  it("names what a plain, tuple, annotated, chained or augmented assignment binds", () => {
    expect(targets("a = 1")).toEqual({ binds: ["a"], changes: [] });
    expect(targets("a, (b, *c) = f()")).toEqual({ binds: ["a", "b", "c"], changes: [] });
    expect(targets("a: int = 1")).toEqual({ binds: ["a"], changes: [] });
    expect(targets("a: int")).toEqual({ binds: ["a"], changes: [] });
    expect(targets("a = b = g(x=1)")).toEqual({ binds: ["a", "b"], changes: [] });
    expect(targets("a += 1")).toEqual({ binds: ["a"], changes: [] });
    expect(targets("f = lambda: 0")).toEqual({ binds: ["f"], changes: [] });
  });

  it("names the object a subscript or attribute assignment changes", () => {
    expect(targets('TABLE["x"] = f')).toEqual({ binds: [], changes: ["TABLE"] });
    expect(targets("config.depth, n = 2, 3")).toEqual({ binds: ["n"], changes: ["config"] });
    expect(targets("a[i:j] = b")).toEqual({ binds: [], changes: ["a"] });
  });

  it("refuses anything else: expressions, calls as targets, several statements on a line", () => {
    expect(targets("f(x)")).toBeNull();
    expect(targets("x == 1")).toBeNull();
    expect(targets("f(x).y = 1")).toBeNull();
    expect(targets("a = 1; b = 2")).toBeNull();
    expect(targets("return x")).toBeNull();
    expect(targets("if x: y = 1")).toBeNull();
  });
});

describe("readImport", () => {
  it("reads plain, dotted and renamed imports", () => {
    expect(imports("import a.b, c as d")).toEqual({
      level: 0,
      from: null,
      names: [
        { name: "a.b", bound: "a", renamed: false },
        { name: "c", bound: "d", renamed: true },
      ],
    });
  });

  it("reads relative, parenthesised and star imports", () => {
    expect(imports("from ..pkg.sub import (x as y,\n    z)")).toEqual({
      level: 2,
      from: "pkg.sub",
      names: [
        { name: "x", bound: "y", renamed: true },
        { name: "z", bound: "z", renamed: false },
      ],
    });
    expect(imports("from . import *")).toEqual({
      level: 1,
      from: "",
      names: [{ name: "*", bound: "*", renamed: false }],
    });
    expect(imports("from ... import m")?.level).toBe(3);
  });

  it("stops at a `;` and refuses what is not an import", () => {
    const { tokens } = single("import a; b = 1");
    expect(readImport(tokens, 0, tokens.length)).toEqual({
      statement: { level: 0, from: null, names: [{ name: "a", bound: "a", renamed: false }] },
      end: 2,
    });
    expect(imports("from x")).toBeNull();
    expect(imports("x = 1")).toBeNull();
  });
});
