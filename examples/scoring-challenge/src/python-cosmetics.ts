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
  let annotation = -1;
  let returns = -1;
  for (const { at, text, depth } of operators(tokens, statement.head, statement.headerEnd)) {
    // A parameter's annotation ends at its default, the next parameter or the closing bracket.
    if (annotation !== -1 && depth === 1 && (text === "," || text === "=" || text === ")")) {
      marks.fill(1, annotation, at);
      annotation = -1;
    }
    if (text === ":" && depth === 1 && isParameterName(tokens, at - 1)) annotation = at;
    else if (text === "->" && depth === 0) returns = at;
    else if (text === ":" && depth === 0) {
      // The header's colon: the return annotation ends here, a one-line body follows.
      if (returns !== -1) marks.fill(1, returns, at);
      return;
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
  if (tokens[statement.head]!.kind !== "name") return;
  let colon = -1;
  for (const { at, text, depth } of operators(tokens, statement.head, statement.headerEnd)) {
    if (depth !== 0) continue;
    if (text === ";") return; // several statements on a line: left alone
    if (text === ":" && colon === -1) colon = at;
    else if (text.endsWith("=")) {
      // An assignment (or a comparison) before any colon: no annotation.
      if (colon !== -1) marks.fill(1, colon, at);
      return;
    }
  }
  if (colon !== -1) marks.fill(1, statement.start, statement.end);
}

/**
 * The operators of tokens [from, to), each with the bracket depth before it. A lambda's colon is
 * left out (`key=lambda x: x` has no annotation), so a `:` seen is a slice, a dict's or a header's.
 */
function* operators(
  tokens: readonly PythonToken[],
  from: number,
  to: number,
): Generator<{ at: number; text: string; depth: number }> {
  let depth = 0;
  const lambdas: number[] = [];
  for (let at = from; at < to; at++) {
    const token = tokens[at]!;
    if (token.kind === "keyword" && token.text === "lambda") lambdas.push(depth);
    if (token.kind !== "op") continue;
    const text = token.text;
    if (text === ":" && lambdas.at(-1) === depth) {
      lambdas.pop();
      continue;
    }
    yield { at, text, depth };
    if (text === "(" || text === "[" || text === "{") depth++;
    else if (text === ")" || text === "]" || text === "}") depth--;
  }
}
