/**
 * The tokens of a Python module that a copy can delete or rewrite without changing what the
 * program computes, for the near-duplicate check (near-duplicate.ts): type annotations
 * (parameters, return types, annotated assignments) and docstrings (a statement that is only a
 * string). Comments and layout are gone already (python-tokens.ts) and names are numbered per
 * shingle; with these gone too, deleting every annotation and docstring of a bundle leaves its
 * fingerprint unchanged (the attack review's copy of `good` without annotations: 0.81 before).
 *
 * Dropping them cannot hide code that computes: an annotation is evaluated at most once, at
 * definition time, and a string statement computes nothing (f-strings, which can call code, are
 * kept). A class-level `x: int` without a value is dropped whole: for a dataclass it is a field,
 * but a copy cannot drop it without changing the dataclass, so the original and its copy lose
 * the same tokens.
 */
import { parseStatements, type Statement } from "./python-statements.js";
import { isFString, type PythonToken } from "./python-tokens.js";

/** A mark (1) on each token of `tokens` that is an annotation or a docstring. */
export function cosmeticTokens(tokens: readonly PythonToken[]): Uint8Array {
  const marks = new Uint8Array(tokens.length);
  const visit = (statements: readonly Statement[]) => {
    for (const statement of statements) {
      if (statement.kind === "def") markSignatureAnnotations(tokens, statement, marks);
      else if (statement.kind === "simple") {
        if (isStringStatement(tokens, statement)) marks.fill(1, statement.start, statement.end);
        else markVariableAnnotation(tokens, statement, marks);
      }
      visit(statement.body);
    }
  };
  visit(parseStatements(tokens));
  return marks;
}

/** `"""text"""` or `"a" "b"` alone: a docstring or a bare string, which computes nothing. */
function isStringStatement(tokens: readonly PythonToken[], statement: Statement): boolean {
  for (let i = statement.head; i < statement.headerEnd; i++) {
    const token = tokens[i]!;
    if (token.kind !== "string" || isFString(token.text)) return false;
  }
  return statement.headerEnd > statement.head;
}

/** `def f(a: int, *b: T, c: int = 1) -> R:`: each `: annotation` and the `-> R`. */
function markSignatureAnnotations(
  tokens: readonly PythonToken[],
  statement: Statement,
  marks: Uint8Array,
): void {
  let depth = 0;
  // Depths at which a `lambda` waits for its colon (a default may be one: `key=lambda x: x`).
  const lambdas: number[] = [];
  let annotation = -1;
  for (let i = statement.head; i < statement.headerEnd; i++) {
    const token = tokens[i]!;
    if (token.kind === "keyword" && token.text === "lambda") {
      lambdas.push(depth);
      continue;
    }
    if (token.kind !== "op") continue;
    const text = token.text;
    if (annotation !== -1) {
      // A parameter's annotation ends at its default, the next parameter or the closing bracket.
      if (depth === 1 && (text === "," || text === "=" || text === ")")) {
        marks.fill(1, annotation, i);
        annotation = -1;
      }
    }
    if (text === "(" || text === "[" || text === "{") depth++;
    else if (text === ")" || text === "]" || text === "}") depth--;
    else if (text === ":" && lambdas.at(-1) === depth) lambdas.pop();
    else if (text === ":" && depth === 1 && annotation === -1 && isParameterName(tokens, i - 1)) {
      annotation = i;
    } else if (text === "->" && depth === 0) {
      // The return annotation runs to the header's colon.
      let end = i + 1;
      let inner = 0;
      while (end < statement.headerEnd) {
        const t = tokens[end]!;
        if (t.kind === "op" && (t.text === "(" || t.text === "[" || t.text === "{")) inner++;
        else if (t.kind === "op" && (t.text === ")" || t.text === "]" || t.text === "}")) inner--;
        else if (inner === 0 && t.kind === "op" && t.text === ":") break;
        end++;
      }
      marks.fill(1, i, end);
      return;
    } else if (text === ":" && depth === 0) {
      return; // the header's colon: what follows is a one-line body
    }
  }
}

/** A parameter name: a name right after `(`, `,`, `*` or `**` (not `lambda x` or `a[x]`). */
function isParameterName(tokens: readonly PythonToken[], at: number): boolean {
  const name = tokens[at];
  const before = tokens[at - 1];
  return (
    name?.kind === "name" && before?.kind === "op" && ["(", ",", "*", "**"].includes(before.text)
  );
}

/** `x: int = 1` loses `: int`; `x: int` (no value) is an annotation only, and goes whole. */
function markVariableAnnotation(
  tokens: readonly PythonToken[],
  statement: Statement,
  marks: Uint8Array,
): void {
  const first = tokens[statement.head]!;
  if (first.kind !== "name") return;
  let depth = 0;
  let colon = -1;
  const lambdas: number[] = [];
  for (let i = statement.head; i < statement.headerEnd; i++) {
    const token = tokens[i]!;
    if (token.kind === "keyword" && token.text === "lambda") {
      lambdas.push(depth);
      continue;
    }
    if (token.kind !== "op") continue;
    const text = token.text;
    if (text === "(" || text === "[" || text === "{") depth++;
    else if (text === ")" || text === "]" || text === "}") depth--;
    else if (text === ":" && lambdas.at(-1) === depth) lambdas.pop();
    else if (depth === 0 && text === ";") {
      return; // several statements on a line: left alone
    } else if (depth === 0 && colon === -1 && text === ":") colon = i;
    else if (depth === 0 && (text === "=" || text.endsWith("="))) {
      // An assignment before any colon is no annotation (`f = lambda: 0` is handled above).
      if (colon === -1) return;
      marks.fill(1, colon, i);
      return;
    }
  }
  if (colon !== -1) marks.fill(1, statement.start, statement.end);
}
