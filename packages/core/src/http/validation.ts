import type { TSchema } from "@sinclair/typebox";
import { FormatRegistry } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler, type ValueError } from "@sinclair/typebox/compiler";
import { Value, ValueErrorType } from "@sinclair/typebox/value";

// TypeBox knows no string formats until they are registered; our schemas use these.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has("date-time")) {
  FormatRegistry.Set(
    "date-time",
    (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)),
  );
}
if (!FormatRegistry.Has("uri")) {
  FormatRegistry.Set("uri", (value) => {
    try {
      return Boolean(new URL(value).protocol);
    } catch {
      return false;
    }
  });
}

/** One entry of FastAPI's HTTPValidationError: where, what and which kind of failure. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Where a value came from; it is the first element of every `loc`. */
export type ValueSource = "body" | "query" | "path" | "header";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** Compile once per schema object: validation is on every request's path. */
function checker(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

const typeNames: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.String]: "string_type",
  [ValueErrorType.StringMinLength]: "string_too_short",
  [ValueErrorType.StringMaxLength]: "string_too_long",
  [ValueErrorType.StringPattern]: "string_pattern_mismatch",
  [ValueErrorType.StringFormat]: "value_error",
  [ValueErrorType.Number]: "float_type",
  [ValueErrorType.Integer]: "int_type",
  [ValueErrorType.NumberMinimum]: "greater_than_equal",
  [ValueErrorType.NumberMaximum]: "less_than_equal",
  [ValueErrorType.NumberExclusiveMinimum]: "greater_than",
  [ValueErrorType.NumberExclusiveMaximum]: "less_than",
  [ValueErrorType.IntegerMinimum]: "greater_than_equal",
  [ValueErrorType.IntegerMaximum]: "less_than_equal",
  [ValueErrorType.Boolean]: "bool_type",
  [ValueErrorType.Array]: "list_type",
  [ValueErrorType.ArrayMinItems]: "too_short",
  [ValueErrorType.ArrayMaxItems]: "too_long",
  [ValueErrorType.Object]: "dict_type",
  [ValueErrorType.ObjectAdditionalProperties]: "extra_forbidden",
  [ValueErrorType.Union]: "union_type",
  [ValueErrorType.Literal]: "literal_error",
  [ValueErrorType.Null]: "none_required",
};

function pointerToLoc(path: string): (string | number)[] {
  if (path === "") return [];
  return path
    .slice(1)
    .split("/")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((part) => (/^(0|[1-9]\d*)$/.test(part) ? Number(part) : part));
}

function toIssue(source: ValueSource, error: ValueError): ValidationIssue {
  const loc: (string | number)[] = [source, ...pointerToLoc(error.path)];
  // A required property that is absent is reported by TypeBox at the property's own path.
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    return { loc, msg: "Field required", type: "missing" };
  }
  return { loc, msg: error.message, type: typeNames[error.type] ?? "value_error" };
}

/**
 * Validate `value` against `schema`. Query strings, path params and headers arrive as strings,
 * so for those sources values are converted (e.g. "5" -> 5) before the check; defaults are
 * filled in. Returns the cleaned value, or the issues in FastAPI's shape.
 */
export function validateValue<T>(
  schema: TSchema,
  value: unknown,
  source: ValueSource,
): { ok: true; value: T } | { ok: false; issues: ValidationIssue[] } {
  let candidate = value;
  if (source !== "body") candidate = Value.Convert(schema, candidate);
  candidate = Value.Default(schema, Value.Clone(candidate));
  const check = checker(schema);
  if (check.Check(candidate)) return { ok: true, value: candidate as T };
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of check.Errors(candidate)) {
    const issue = toIssue(source, error);
    // Union failures repeat one path many times; the first message is the useful one.
    const key = issue.loc.join("\u0000");
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
    if (issues.length >= 50) break;
  }
  return { ok: false, issues };
}
