// Database spans without an instrumentation library: postgres.js has none, so `traceSql` wraps
// one client. A query's span starts when the query is first awaited (when postgres.js sends it)
// and ends when it settles; fragments embedded in another query are never awaited and make none.
// The span names the statement (`db select`) and carries its text with `$n` placeholders, never
// its parameters (they may be anything a miner sent). Transactions are one span around theirs.
// Only a query made inside a span (a request, a job, a collection) is traced: a background
// loop's queries (a job queue's polls, every few hundred milliseconds) would otherwise each be a
// trace of their own.
import type { Sql } from "../db/open-database.js";
import { failSpan, insideSpan, startSpan, tracingEnabled, withSpan } from "./tracing.js";

const TRACED: unique symbol = Symbol("traced sql");
const MAX_TEXT = 1000;

function isTemplate(value: unknown): value is TemplateStringsArray {
  return Array.isArray(value) && Array.isArray((value as { raw?: unknown }).raw);
}

function queryText(strings: readonly string[]): string {
  let text = strings[0] ?? "";
  for (let i = 1; i < strings.length; i++) text += `$${i}${strings[i]}`;
  text = text.replace(/\s+/g, " ").trim();
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

function operationOf(text: string): string {
  const word = /^[a-z]+/i.exec(text.trim())?.[0]?.toLowerCase();
  return word ?? "query";
}

type Thenable = {
  then(
    onFulfilled?: (value: unknown) => unknown,
    onRejected?: (error: unknown) => unknown,
  ): unknown;
};

/** Make `query` open a span when first awaited, ended when it settles. */
function instrument(query: unknown, text: string | null, operation: string): void {
  if (query === null || typeof query !== "object") return;
  const target = query as Thenable;
  const original = target.then;
  if (typeof original !== "function") return;
  let started = false;
  // biome-ignore lint/suspicious/noThenProperty: the query IS a thenable; this wraps its own then.
  Object.defineProperty(target, "then", {
    configurable: true,
    writable: true,
    value(
      this: Thenable,
      onFulfilled?: (value: unknown) => unknown,
      onRejected?: (error: unknown) => unknown,
    ) {
      if (!started) {
        started = true;
        if (!insideSpan()) return original.call(this, onFulfilled, onRejected);
        const span = startSpan(`db ${operation}`, {
          kind: "client",
          attributes: {
            "db.system.name": "postgresql",
            "db.operation.name": operation,
            "db.query.text": text ?? undefined,
          },
        });
        original.call(
          this,
          () => span.end(),
          (error: unknown) => {
            failSpan(span, error);
            span.end();
          },
        );
      }
      return original.call(this, onFulfilled, onRejected);
    },
  });
}

type Fn = (...args: unknown[]) => unknown;

/** `begin`/`savepoint` with the callback's scoped client traced too, all in one span. */
function tracedScope(run: Fn, name: string): Fn {
  return (...args: unknown[]) => {
    if (!insideSpan()) return run(...args);
    const last = args.length - 1;
    const fn = args[last];
    if (typeof fn === "function") {
      args[last] = (scoped: Sql) => (fn as Fn)(traceSql(scoped));
    }
    return withSpan(name, () => run(...args) as Promise<unknown>, {
      kind: "client",
      attributes: { "db.system.name": "postgresql", "db.operation.name": name.slice(3) },
    });
  };
}

/**
 * A client that makes a span for every query it sends while tracing is on (see the file
 * comment); with tracing off it answers exactly as `sql`, one branch per query dearer. Idempotent.
 * @example const sql = traceSql(db.sql); await sql`insert into scores ${sql(row)}`; // span "db insert"
 */
export function traceSql(sql: Sql): Sql {
  if ((sql as unknown as Record<symbol, unknown>)[TRACED]) return sql;
  const handler: ProxyHandler<Sql> = {
    apply(target, thisArg, args) {
      const result = Reflect.apply(target as unknown as Fn, thisArg, args);
      if (tracingEnabled() && isTemplate(args[0])) {
        const text = queryText(args[0]);
        instrument(result, text, operationOf(text));
      }
      return result;
    },
    get(target, property) {
      if (property === TRACED) return true;
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      switch (property) {
        case "begin":
          return tracedScope(value.bind(target) as Fn, "db transaction");
        case "savepoint":
          return tracedScope(value.bind(target) as Fn, "db savepoint");
        case "unsafe":
          return (...args: unknown[]) => {
            const query = (value as Fn).apply(target, args);
            // Unsafe text may carry literal values: only the statement's kind is recorded.
            if (tracingEnabled()) instrument(query, null, operationOf(String(args[0] ?? "")));
            return query;
          };
        case "reserve":
          return async (...args: unknown[]) =>
            traceSql((await (value as Fn).apply(target, args)) as Sql);
        default:
          return value;
      }
    },
  };
  return new Proxy(sql, handler);
}
