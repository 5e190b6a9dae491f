/**
 * A light parse of Python for the reachability pass (python-reachability.ts): statements and
 * their indented suites, read from the tokens' logical lines (python-tokens.ts), and what each
 * statement binds. Not a grammar: it never rejects anything and never throws. Code it cannot
 * classify becomes a plain statement, which the reachability pass always keeps, so a parse it gets
 * wrong can only keep too much (the safe side, see python-reachability.ts).
 */
import type { PythonToken } from "./python-tokens.js";

/** One statement: a logical line (with its decorators) and the suite indented under it. */
export interface Statement {
  kind: StatementKind;
  /** First token (its first decorator's `@` for a decorated definition). */
  start: number;
  /** The token that classifies it: `def`, `class`, `import`, `if`, ... (after the decorators). */
  head: number;
  /** End of its header: the decorators and the logical line of `head`. The suite follows. */
  headerEnd: number;
  /** End of the whole statement, suite included (exclusive). */
  end: number;
  /** The suite's statements (none for a simple statement or a one-line compound one). */
  body: Statement[];
}

/**
 * `def`/`class` bind their name; `import` and `from` are import statements; `compound` is any
 * other statement with a suite or a header keyword (`if`, `for`, `try`, `with`, `match`, ...);
 * `simple` is everything else (expressions, assignments, `return`, `pass`, ...).
 */
export type StatementKind = "def" | "class" | "import" | "from" | "compound" | "simple";

// Python stops at 100 levels of indentation; deeper suites are kept whole, unparsed (and the
// recursion below stays shallow whatever the input).
const MAX_DEPTH = 100;

const COMPOUND_KEYWORDS: ReadonlySet<string> = new Set([
  "if",
  "elif",
  "else",
  "for",
  "while",
  "try",
  "except",
  "finally",
  "with",
]);

/** The statements of a module, each with its suite parsed the same way. */
export function parseStatements(tokens: readonly PythonToken[]): Statement[] {
  const lines: number[] = [];
  // The first token always starts a logical line, so every token belongs to one of these.
  for (let i = 0; i < tokens.length; i++) if (tokens[i]!.indent >= 0) lines.push(i);
  lines.push(tokens.length);
  const indentOf = (line: number) => Math.max(0, tokens[lines[line]!]!.indent);
  const firstText = (line: number) => tokens[lines[line]!]!.text;

  const block = (from: number, to: number, depth: number): Statement[] => {
    const out: Statement[] = [];
    let line = from;
    while (line < to) {
      const indent = indentOf(line);
      // Decorators belong to the definition under them.
      let header = line;
      while (header + 1 < to && firstText(header) === "@" && indentOf(header + 1) === indent) {
        header++;
      }
      let next = header + 1;
      while (next < to && indentOf(next) > indent) next++;
      const start = lines[line]!;
      const head = lines[header]!;
      const headerEnd = lines[header + 1]!;
      const end = lines[next]!;
      let body: Statement[] = [];
      if (next > header + 1) {
        body =
          depth < MAX_DEPTH
            ? block(header + 1, next, depth + 1)
            : [
                {
                  kind: "simple",
                  start: headerEnd,
                  head: headerEnd,
                  headerEnd: end,
                  end,
                  body: [],
                },
              ];
      }
      out.push({ kind: classify(tokens, head, headerEnd), start, head, headerEnd, end, body });
      line = next;
    }
    return out;
  };
  return block(0, lines.length - 1, 0);
}

function classify(tokens: readonly PythonToken[], head: number, headerEnd: number): StatementKind {
  let at = head;
  if (tokens[at]?.text === "async") at++;
  const first = tokens[at]!;
  if (first.kind === "keyword") {
    if (first.text === "def" || first.text === "class") return first.text;
    if (first.text === "import") return "import";
    if (first.text === "from" && hasTopLevel(tokens, at, headerEnd, "import")) return "from";
    if (COMPOUND_KEYWORDS.has(first.text)) return "compound";
  }
  // `match x:` / `case y:` (soft keywords) and anything else ending its header with a colon.
  return tokens[headerEnd - 1]?.text === ":" && tokens[headerEnd - 1]?.kind === "op"
    ? "compound"
    : "simple";
}

/** Whether `text` occurs in [from, to) outside brackets (as a keyword or an operator). */
function hasTopLevel(
  tokens: readonly PythonToken[],
  from: number,
  to: number,
  text: string,
): boolean {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const token = tokens[i]!;
    if (token.kind === "op") {
      if (token.text === "(" || token.text === "[" || token.text === "{") depth++;
      else if (token.text === ")" || token.text === "]" || token.text === "}") depth--;
    }
    if (depth === 0 && token.text === text && token.kind !== "name" && token.kind !== "string") {
      return true;
    }
  }
  return false;
}

/** The name a `def` or `class` statement binds, or null when it is malformed. */
export function definedName(tokens: readonly PythonToken[], statement: Statement): string | null {
  let at = statement.head;
  if (tokens[at]?.text === "async") at++;
  const name = tokens[at + 1];
  return name?.kind === "name" ? name.text : null;
}

/**
 * What a simple statement assigns, when it is only an assignment: plain names it binds
 * (`a = 1`, `a, (b, *c) = ...`, `a: int = 1`, `a += 1`), and the names whose objects it changes
 * (`REGISTRY["x"] = f`, `config.depth = 2`). Null for anything else, or for several statements on
 * one line (`a = 1; f()`): those are kept as they are.
 */
export function assignmentTargets(
  tokens: readonly PythonToken[],
  statement: Statement,
): { binds: string[]; changes: string[] } | null {
  if (statement.kind !== "simple" || statement.body.length > 0) return null;
  const { head, headerEnd } = statement;
  // Split at top-level `=` (and the augmented forms), `;` refuses, `:` starts an annotation.
  const segments: [number, number][] = [];
  let depth = 0;
  let segmentStart = head;
  let annotation = -1;
  let assigned = false;
  for (let i = head; i < headerEnd; i++) {
    const token = tokens[i]!;
    if (token.kind !== "op") continue;
    const text = token.text;
    if (text === "(" || text === "[" || text === "{") depth++;
    else if (text === ")" || text === "]" || text === "}") depth--;
    else if (depth === 0 && text === ";") return null;
    else if (depth === 0 && text === ":" && segments.length === 0 && annotation === -1) {
      annotation = i;
    } else if (depth === 0 && (text === "=" || isAugmented(text))) {
      segments.push([segmentStart, annotation === -1 ? i : annotation]);
      segmentStart = i + 1;
      annotation = -1;
      assigned = true;
      if (text !== "=") break;
    }
  }
  // `a: int` (an annotation without a value) declares `a` too.
  if (!assigned && annotation !== -1) segments.push([head, annotation]);
  if (segments.length === 0) return null;
  const binds: string[] = [];
  const changes: string[] = [];
  for (const [from, to] of segments) {
    if (!targetNames(tokens, from, to, binds, changes)) return null;
  }
  return { binds, changes };
}

function isAugmented(text: string): boolean {
  return text.length >= 2 && text.endsWith("=") && !["==", "!=", "<=", ">=", ":="].includes(text);
}

/**
 * Names of one assignment target: a plain name or a tuple/list of them binds; a subscript or
 * attribute (`x[...]`, `x.y`) changes its base. False for anything else (a call, a literal...).
 */
function targetNames(
  tokens: readonly PythonToken[],
  from: number,
  to: number,
  binds: string[],
  changes: string[],
): boolean {
  let i = from;
  while (i < to) {
    const token = tokens[i]!;
    if (token.kind === "op" && ["(", ")", "[", "]", ",", "*"].includes(token.text)) {
      i++;
      continue;
    }
    if (token.kind !== "name") return false;
    const next = i + 1 < to ? tokens[i + 1] : undefined;
    if (
      next !== undefined &&
      (next.kind !== "op" || ![",", ")", "]", ".", "["].includes(next.text))
    ) {
      // `f(x).y = 1`, `a + b = ...`: not a target this light parse understands.
      return false;
    }
    if (next?.kind === "op" && (next.text === "." || next.text === "[")) {
      changes.push(token.text);
      // Skip the rest of this element: up to the next top-level comma of the target.
      let depth = 0;
      i++;
      while (i < to) {
        const t = tokens[i]!;
        if (t.kind === "op" && (t.text === "(" || t.text === "[" || t.text === "{")) depth++;
        else if (t.kind === "op" && (t.text === ")" || t.text === "]" || t.text === "}")) {
          if (depth === 0) break;
          depth--;
        } else if (depth === 0 && t.kind === "op" && t.text === ",") break;
        i++;
      }
      continue;
    }
    binds.push(token.text);
    i++;
  }
  return binds.length + changes.length > 0;
}

/** One import statement: `import a.b as c, d` or `from ..a import b as c, *`. */
export interface ImportStatement {
  /** Dots before the module of a `from` import (0 for an absolute one or a plain `import`). */
  level: number;
  /** The module of a `from` import ("" for `from . import x`), null for a plain `import`. */
  from: string | null;
  /**
   * Each imported name and the name it binds: `import a.b` binds `a` (to module a, and loads
   * a.b); `import a.b as c` binds `c` to module a.b (`renamed`); `from m import x as y` binds y.
   */
  names: { name: string; bound: string; renamed: boolean }[];
}

/**
 * The import statement starting at token `at` (`import` or `from`), and where it ends: at the
 * end of `to`, or at a top-level `;`. Null when the tokens there are not an import.
 */
export function readImport(
  tokens: readonly PythonToken[],
  at: number,
  to: number,
): { statement: ImportStatement; end: number } | null {
  const first = tokens[at];
  if (first?.kind !== "keyword") return null;
  let i = at + 1;
  let level = 0;
  let from: string | null = null;
  if (first.text === "from") {
    while (
      i < to &&
      tokens[i]!.kind === "op" &&
      (tokens[i]!.text === "." || tokens[i]!.text === "...")
    ) {
      level += tokens[i]!.text.length;
      i++;
    }
    const dotted = readDotted(tokens, i, to);
    from = dotted.name;
    i = dotted.end;
    if (tokens[i]?.text !== "import" || tokens[i]?.kind !== "keyword") return null;
    i++;
  } else if (first.text !== "import") {
    return null;
  }
  const names: ImportStatement["names"] = [];
  while (i < to) {
    const token = tokens[i]!;
    if (token.kind === "op" && token.text === ";") break;
    if (token.kind === "op" && (token.text === "(" || token.text === ")" || token.text === ",")) {
      i++;
      continue;
    }
    if (token.kind === "op" && token.text === "*") {
      names.push({ name: "*", bound: "*", renamed: false });
      i++;
      continue;
    }
    const dotted = readDotted(tokens, i, to);
    if (dotted.name === "") break;
    i = dotted.end;
    let bound = from === null ? dotted.name.split(".")[0]! : dotted.name;
    let renamed = false;
    if (
      tokens[i]?.text === "as" &&
      tokens[i]?.kind === "keyword" &&
      tokens[i + 1]?.kind === "name"
    ) {
      bound = tokens[i + 1]!.text;
      renamed = true;
      i += 2;
    }
    names.push({ name: dotted.name, bound, renamed });
  }
  return { statement: { level, from, names }, end: i };
}

function readDotted(
  tokens: readonly PythonToken[],
  from: number,
  to: number,
): { name: string; end: number } {
  let i = from;
  const parts: string[] = [];
  while (i < to && tokens[i]!.kind === "name") {
    parts.push(tokens[i]!.text);
    i++;
    if (
      i < to &&
      tokens[i]!.kind === "op" &&
      tokens[i]!.text === "." &&
      tokens[i + 1]?.kind === "name"
    ) {
      i++;
    } else {
      break;
    }
  }
  return { name: parts.join("."), end: i };
}
