import type { DevEnvDefault } from "./_dev-project-config.js";

/** What a project's dev defaults came to: the variables to add, and what to tell the user. */
export interface AppliedDevDefaults {
  set: Record<string, string>;
  notes: string[];
}

// An empty value counts as unset: `VAR= npm start` is how a shell clears a variable for one run.
const isSet = (env: Record<string, string | undefined>, name: string) =>
  env[name] !== undefined && env[name] !== "";

/**
 * The project's dev defaults that apply under the user's environment `env`: a variable is set
 * only when the user left it unset and left every one of its `unless` variables unset. Each
 * applied default is said: its `note`, else `NAME=value (dev default)`. The user's own value
 * always wins, and nothing is said about it.
 */
export function applyDevDefaults(
  env: Record<string, string | undefined>,
  defaults: Record<string, DevEnvDefault>,
): AppliedDevDefaults {
  const set: Record<string, string> = {};
  const notes: string[] = [];
  for (const [name, rule] of Object.entries(defaults)) {
    if (isSet(env, name) || rule.unless.some((other) => isSet(env, other))) continue;
    set[name] = rule.value;
    notes.push(rule.note ?? `${name}=${rule.value} (dev default)`);
  }
  return { set, notes };
}
