import { inspect } from "node:util";
import { createLogger, type Logger, type LogLevel } from "@platform/core";

// @polkadot/util's `logger()` (RPC-CORE, API/INIT, API-WS, ...) has no hook: it calls
// console.error/warn/log itself with `formatDate(now)` ("2026-11-29 05:09:19") and its type
// (`${origin.toUpperCase()}:`, padded to 16) before the values. Only calls of exactly that shape
// are taken; every other console call passes through untouched.
const POLKADOT_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const POLKADOT_TYPE = /^\s*[^\s:]+:$/;

const levels = { error: "error", warn: "warn", log: "info" } as const satisfies Record<
  string,
  LogLevel
>;
type ConsoleMethod = keyof typeof levels;

let installed = false;

/** The origin (`RPC-CORE`) when `args` are a line written by @polkadot/util's logger. */
function polkadotOrigin(args: unknown[]): string | undefined {
  const [date, type] = args;
  if (typeof date !== "string" || typeof type !== "string") return undefined;
  if (!POLKADOT_DATE.test(date) || !POLKADOT_TYPE.test(type)) return undefined;
  // The type is the origin upper-cased: a lower-case letter means someone else's line.
  if (type !== type.toUpperCase()) return undefined;
  return type.trim().slice(0, -1);
}

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  return inspect(value, { breakLength: Number.POSITIVE_INFINITY, depth: 4 });
}

/**
 * Sends @polkadot's own console lines through our JSON logger (name `polkadot`, the level of
 * the console method, the origin as a field), so every log line of a process that talks to a
 * chain is JSON. Process-wide and installed once; later calls do nothing. The chain client
 * calls it, so the validator, the master and `platform dev` all get it.
 */
export function routePolkadotConsole(log: Logger = createLogger({ name: "polkadot" })): void {
  if (installed) return;
  installed = true;
  for (const method of Object.keys(levels) as ConsoleMethod[]) {
    const original = console[method];
    const level = levels[method];
    console[method] = (...args: unknown[]) => {
      const origin = polkadotOrigin(args);
      if (origin === undefined) return original.apply(console, args);
      log[level](args.slice(2).map(text).join(" "), { origin });
    };
  }
}
