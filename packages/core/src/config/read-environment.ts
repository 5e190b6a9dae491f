import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { validateValue } from "../http/validation.js";
import type { ConfigIssue } from "./config-error.js";

/**
 * Read the variables `schema` declares from `env` and check them all: strings are converted
 * like a query string ("5" -> 5, "true" -> true), defaults filled in, an empty variable counts
 * as unset. Returns the value, or one issue per bad variable (never its value).
 * @example const read = readEnvironment(Type.Object({ WORKERS: Type.Integer({ minimum: 1, default: 2 }) }), process.env);
 */
export function readEnvironment<T extends TObject>(
  schema: T,
  env: Record<string, string | undefined>,
): { ok: true; value: Static<T> } | { ok: false; issues: ConfigIssue[] } {
  const picked: Record<string, string> = {};
  for (const name of Object.keys(schema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== "") picked[name] = value;
  }
  const result = validateValue<Static<T>>(schema, picked, "query");
  if (result.ok) return result;
  const issues: ConfigIssue[] = [];
  for (const issue of result.issues) {
    const variable = String(issue.loc[1] ?? "(config)");
    // One line per variable: the first failure says enough.
    if (issues.some((known) => known.variable === variable)) continue;
    const where = issue.loc.length > 2 ? ` (at ${issue.loc.slice(2).join(".")})` : "";
    const choices = literals(schema.properties[variable]);
    const message =
      issue.type === "missing"
        ? "required"
        : choices && issue.loc.length === 2
          ? `must be one of ${choices.map((choice) => JSON.stringify(choice)).join(", ")}`
          : `${issue.msg}${where}`;
    issues.push({ variable, message });
  }
  return { ok: false, issues };
}

// TypeBox reports a failed union of literals as "Expected union value": name the choices instead.
function literals(schema: TSchema | undefined): unknown[] | undefined {
  const options = schema?.anyOf as TSchema[] | undefined;
  if (!Array.isArray(options) || !options.every((option) => "const" in option)) return undefined;
  return options.map((option) => option.const);
}
