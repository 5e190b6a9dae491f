import { describe, expect, it } from "vitest";
import { cosmeticTokens } from "./python-cosmetics.js";
import { pythonTokens } from "./python-tokens.js";

/** The tokens of `source` that are not annotations or docstrings, joined by spaces. */
function structural(source: string): string {
  const tokens = pythonTokens(source);
  const marks = cosmeticTokens(tokens);
  return tokens
    .filter((_, i) => marks[i] === 0)
    .map((t) => t.text)
    .join(" ");
}

describe("cosmeticTokens", () => {
  it("drops parameter and return annotations, keeps names, defaults and the body", () => {
    expect(
      structural(
        "def f(self, x: torch.Tensor, *args: int, k: Dict[str, int] = {}, **kw: Any) -> Tuple[int, int]:\n    return x\n",
      ),
    ).toBe("def f ( self , x , * args , k = { } , ** kw ) : return x");
    expect(structural("def g(a: int = 1) -> None: return a\n")).toBe("def g ( a = 1 ) : return a");
  });

  it("leaves lambdas in defaults and one-line bodies alone", () => {
    expect(structural("def f(a, key=lambda x, y: x + y, b: int = 2): pass\n")).toBe(
      "def f ( a , key = lambda x , y : x + y , b = 2 ) : pass",
    );
    expect(structural("def f(x): return {x: 1}\n")).toBe("def f ( x ) : return { x : 1 }");
  });

  it("drops variable annotations, and a bare annotation whole", () => {
    expect(structural("x: int = 1\nself.w: Tensor = torch.zeros(3)\ny: float\nz = 2\n")).toBe(
      "x = 1 self . w = torch . zeros ( 3 ) z = 2",
    );
    expect(structural("f = lambda: 0\nd[k] = v[1:2]\nok: bool = a == b\n")).toBe(
      "f = lambda : 0 d [ k ] = v [ 1 : 2 ] ok = a == b",
    );
  });

  it("drops docstrings and bare strings, keeps f-strings and strings in expressions", () => {
    const source = [
      '"""Module docstring."""',
      "class A:",
      "    'Class doc' \"continued\"",
      "    def f(self):",
      '        """Method doc."""',
      '        f"{self.g()}"',
      '        return "kept"',
      "",
    ].join("\n");
    expect(structural(source)).toBe('class A : def f ( self ) : f"{self.g()}" return "kept"');
  });

  it("never throws on garbage", () => {
    for (const source of ["def (:", "x: = =", "def f(a: [) -> :", ": : :", "def"]) {
      expect(() => cosmeticTokens(pythonTokens(source))).not.toThrow();
    }
  });
});
