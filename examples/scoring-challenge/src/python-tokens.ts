/**
 * A Python tokenizer for similarity, not for execution: it keeps what a copy cannot change
 * without changing the program (keywords, operators, the shape of literals and which names
 * repeat) and drops what a disguise changes for free (comments, whitespace). The shingles then
 * drop the names and literal values too (near-duplicate.ts); the reachability pass reads them
 * (python-reachability.ts), which is why each token keeps its text and where its logical line
 * starts. Linear in the input, never throws: bytes it does not understand become one-character
 * tokens.
 */

/** One token: `kind` decides how it is normalised. */
export interface PythonToken {
  kind: "name" | "keyword" | "number" | "string" | "op";
  /** Its source text (a string literal with its prefix and quotes). */
  text: string;
  /**
   * The indentation column of the logical line this token starts, or -1 when it does not start
   * one (it follows another token on the same line, or sits inside brackets or after a `\`
   * continuation, as Python's own tokenizer joins those lines). Tabs advance to the next multiple
   * of 8, as in Python.
   */
  indent: number;
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

// Characters an operator can start with: anything else skips the operator table.
const OPERATOR_START = new Set(OPERATORS.map((op) => op[0]!));

/** The tokens of `source`, comments and whitespace dropped. */
export function pythonTokens(source: string): PythonToken[] {
  const tokens: PythonToken[] = [];
  const length = source.length;
  let at = 0;
  // Logical lines, as Python's tokenizer sees them: a newline ends one only outside brackets.
  let depth = 0;
  let lineStart = true;
  let physicalLine = 0;
  while (at < length) {
    const code = source.charCodeAt(at);
    if (code === 10 /* \n */) {
      at++;
      physicalLine = at;
      if (depth === 0) lineStart = true;
      continue;
    }
    if (code === 92 /* backslash */) {
      // A backslash before the end of the line joins the next line to this one.
      at++;
      if (source.charCodeAt(at) === 13) at++;
      if (source.charCodeAt(at) === 10) {
        at++;
        physicalLine = at;
      }
      continue;
    }
    if (code === 32 || code === 9 || code === 13 || code === 12) {
      at++;
      continue;
    }
    if (code === 35 /* # */) {
      const end = source.indexOf("\n", at);
      at = end === -1 ? length : end;
      continue;
    }
    const start = at;
    const indent = lineStart ? columnAt(source, physicalLine, start) : -1;
    lineStart = false;
    if (code === 34 || code === 39 /* quotes */) {
      at = skipString(source, at);
      tokens.push({ kind: "string", text: source.slice(start, at), indent });
      continue;
    }
    // ASCII names by char codes (most of any source), the Unicode pattern for any other.
    let end = -1;
    if (code >= 128) {
      NAME.lastIndex = at;
      if (NAME.test(source)) end = NAME.lastIndex;
    } else if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95) {
      end = at + 1;
      while (end < length && isNamePart(source.charCodeAt(end))) end++;
      if (end < length && source.charCodeAt(end) >= 128) {
        NAME.lastIndex = at;
        if (NAME.test(source)) end = NAME.lastIndex;
      }
    }
    if (end !== -1) {
      const text = source.slice(at, end);
      const next = source.charCodeAt(end);
      if ((next === 34 || next === 39) && STRING_PREFIX.test(text)) {
        at = skipString(source, end);
        tokens.push({ kind: "string", text: source.slice(start, at), indent });
        continue;
      }
      tokens.push({ kind: KEYWORDS.has(text) ? "keyword" : "name", text, indent });
      at = end;
      continue;
    }
    if (isDigit(code) || (code === 46 /* . */ && isDigit(source.charCodeAt(at + 1)))) {
      NUMBER.lastIndex = at;
      if (NUMBER.test(source)) {
        at = NUMBER.lastIndex;
        tokens.push({ kind: "number", text: source.slice(start, at), indent });
        continue;
      }
    }
    const char = source[at]!;
    const op =
      (OPERATOR_START.has(char) &&
        OPERATORS.find((candidate) => source.startsWith(candidate, at))) ||
      char;
    if (op === "(" || op === "[" || op === "{") depth++;
    else if ((op === ")" || op === "]" || op === "}") && depth > 0) depth--;
    tokens.push({ kind: "op", text: op, indent });
    at += op.length;
  }
  return tokens;
}

/** Whether a string token is an f-string (its fields are code). */
export function isFString(text: string): boolean {
  const quote = text.search(/['"]/);
  return quote > 0 && text.slice(0, quote).toLowerCase().includes("f");
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isNamePart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || isDigit(code);
}

/** The indentation column of the token at `at` on the line starting at `line`, as Python counts. */
function columnAt(source: string, line: number, at: number): number {
  let column = 0;
  for (let i = line; i < at; i++) {
    const char = source[i];
    if (char === "\t") column = column - (column % 8) + 8;
    else if (char === "\f") column = 0;
    else column++;
  }
  return column;
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
