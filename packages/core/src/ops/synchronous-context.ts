// A context manager without AsyncLocalStorage: a context is active for the synchronous call it
// is entered for, and code that crosses an `await` passes its span's context on explicitly
// (`withSpan` hands it to its callback; `injectTraceHeaders`, `startSpan` and `withSpan` take
// it as `parent`). Why: the OpenTelemetry SDK's default manager is an AsyncLocalStorage, and up
// to Node 22 once one is entered every promise and async resource the process makes runs its
// init hook: measured on the master's proxy on Node 20, about 12 µs of a 60 µs request, with
// tracing on whether or not anything is sampled (Node 24 and 26 carry the storage in
// AsyncContextFrame instead: the `async-context` bench figure measures both). A server whose spans are few and whose
// parents are at hand (the master) traces for nearly nothing this way; a challenge, whose
// handlers' database spans need the implicit parent, keeps AsyncLocalStorage.
import { type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";

/** The OpenTelemetry `ContextManager` of `startTracing({ context: "explicit" })`. */
export class SynchronousContextManager implements ContextManager {
  private readonly stack: Context[] = [];

  active(): Context {
    return this.stack[this.stack.length - 1] ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.stack.push(context);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }

  /** Nothing is bound: a callback runs in whatever context is active when it is called. */
  bind<T>(_context: Context, target: T): T {
    return target;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.stack.length = 0;
    return this;
  }
}
