/**
 * A Python tokenizer for similarity, not for execution: it keeps what a copy cannot change
 * without changing the program (keywords, operators, the shape of literals and which names
 * repeat) and drops what a disguise changes for free (comments, whitespace, the names and the
 * literal values themselves). Linear in the input, never throws: bytes it does not understand
 * become one-character tokens.
 */

/** One token: `kind` decides how it is normalised; `text` is kept for keywords and operators. */
export interface PythonToken {
  kind: "name" | "keyword" | "number" | "string" | "op";
  text: string;
}

// Hard keywords only: soft ones (match, case, type, _) are ordinary names outside their statements.
const KEYWORDS: ReadonlySet<string> = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except " +
    "finally for from global if import in is lambda nonlocal not or pass raise return try while " +
    "with yield"
  ).split(" "),
);

// Longest first, so `**=` is one token and not `**` then `=`.
const OPERATORS = [
  "**=",
  "//=",
  ">>=",
  "<<=",
  "...",
  "->",
  ":=",
  "==",
  "!=",
  "<=",
  ">=",
  "**",
  "//",
  "<<",
  ">>",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "&=",
  "|=",
  "^=",
  "@=",
];

const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
const NUMBER =
  /(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)/y;
const STRING_PREFIX = /^(?:[rRuUbBfF]|[rR][bBfF]|[bBfF][rR])$/;

/** The tokens of `source`, comments and whitespace dropped. */
export function pythonTokens(source: string): PythonToken[] {
  const tokens: PythonToken[] = [];
  const length = source.length;
  let at = 0;
  while (at < length) {
    const char = source[at]!;
    if (
      char === " " ||
      char === "\t" ||
      char === "\n" ||
      char === "\r" ||
      char === "\f" ||
      char === "\\"
    ) {
      at++;
      continue;
    }
    if (char === "#") {
      const end = source.indexOf("\n", at);
      at = end === -1 ? length : end + 1;
      continue;
    }
    if (char === '"' || char === "'") {
      at = skipString(source, at);
      tokens.push({ kind: "string", text: "" });
      continue;
    }
    NAME.lastIndex = at;
    const name = NAME.exec(source);
    if (name) {
      const text = name[0];
      const next = source[at + text.length];
      if ((next === '"' || next === "'") && STRING_PREFIX.test(text)) {
        at = skipString(source, at + text.length);
        tokens.push({ kind: "string", text: "" });
        continue;
      }
      tokens.push({ kind: KEYWORDS.has(text) ? "keyword" : "name", text });
      at += text.length;
      continue;
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(source);
    if (number && number[0] !== ".") {
      tokens.push({ kind: "number", text: number[0] });
      at += number[0].length;
      continue;
    }
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, at)) ?? char;
    tokens.push({ kind: "op", text: op });
    at += op.length;
  }
  return tokens;
}

/** Index just past the string literal whose opening quote is at `start`. */
function skipString(source: string, start: number): number {
  const quote = source[start]!;
  const triple = source.startsWith(quote.repeat(3), start);
  let at = start + (triple ? 3 : 1);
  while (at < source.length) {
    const char = source[at]!;
    if (char === "\\") {
      at += 2;
      continue;
    }
    if (triple) {
      if (source.startsWith(quote.repeat(3), at)) return at + 3;
    } else if (char === quote) {
      return at + 1;
    } else if (char === "\n") {
      // An unterminated one-line string ends at the line, as Python's tokenizer gives up there.
      return at;
    }
    at++;
  }
  return source.length;
}
