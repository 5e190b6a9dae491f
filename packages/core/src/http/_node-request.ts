// The web Request the node adapter hands to handlers: built over node's IncomingMessage, making
// each part only when something reads it. undici's Request constructor (an AbortController, a
// signal following the adapter's, a URL record, a Headers copy) was most of the kit's
// per-request cost on a small GET, which reads only the method, the URL and a few headers.
// The technique is @hono/node-server's: an object whose prototype chain reaches
// Request.prototype (so `instanceof Request` holds) with getters for the cheap parts, and a real
// Request built on first use of anything else (the body of a POST, clone(), text(), ...).
// Headers are built on first read, the signal (and its close listener) too.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BODYLESS_METHODS, headersFromRaw, requestBodyStream } from "./request-body-stream.js";

const kReal: unique symbol = Symbol("real request");

class NodeRequest {
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #url: string;
  /**
   * Made up front, as before the shim: the body starts flowing into it at once, so when the
   * response goes out `req.complete` (and with it keep-alive) is what it always was.
   */
  readonly #body: ReadableStream<Uint8Array> | undefined;
  #headers: Headers | undefined;
  #abort: AbortController | undefined;
  #real: Request | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, url: string) {
    this.#req = req;
    this.#res = res;
    this.#url = url;
    this.#body = BODYLESS_METHODS.has(this.method) ? undefined : requestBodyStream(req);
  }

  get method(): string {
    return this.#req.method ?? "GET";
  }

  get url(): string {
    return this.#url;
  }

  get headers(): Headers {
    if (this.#headers === undefined) this.#headers = headersFromRaw(this.#req.rawHeaders);
    return this.#headers;
  }

  /** Aborted when the client goes away before the answer is fully written. */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      const abort = new AbortController();
      this.#abort = abort;
      const res = this.#res;
      // Only a request whose signal is read pays for the listener (and this closure).
      if (res.closed) {
        if (!res.writableFinished) abort.abort();
      } else {
        res.once("close", () => {
          if (!res.writableFinished) abort.abort();
        });
      }
    }
    return this.#abort.signal;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#body === undefined ? null : this[kReal]().body;
  }

  get bodyUsed(): boolean {
    return this.#real?.bodyUsed ?? false;
  }

  clone(): Request {
    // The copy's signal follows this one's, as Request.clone() does.
    return new Request(this[kReal]().clone(), { signal: this.signal });
  }

  /**
   * The real Request, built once: what the body, clone and every other member read. With
   * `signal` when it stands in for this request (see {@link nodeRequest}).
   */
  [kReal](signal?: AbortSignal): Request {
    if (this.#real === undefined) {
      const method = this.method;
      const init: RequestInit & { duplex?: "half" } = { method, headers: this.headers };
      if (signal) init.signal = signal;
      if (this.#body !== undefined) {
        init.body = this.#body;
        init.duplex = "half";
      }
      this.#real = new Request(this.#url, init);
    }
    return this.#real;
  }
}

type Delegating = Record<PropertyKey, unknown> & { [kReal](signal?: AbortSignal): Request };
const prototype = NodeRequest.prototype as unknown as Delegating;

// Every other member of Request (text(), json(), arrayBuffer(), mode, cache, ...) answers from
// the real Request, so the shim is whole whatever this Node's Request has.
for (const name of Object.getOwnPropertyNames(Request.prototype)) {
  if (name === "constructor" || Object.hasOwn(prototype, name)) continue;
  const descriptor = Object.getOwnPropertyDescriptor(Request.prototype, name);
  if (descriptor?.get) {
    Object.defineProperty(prototype, name, {
      get(this: Delegating) {
        return (this[kReal]() as unknown as Record<string, unknown>)[name];
      },
      configurable: true,
    });
  } else if (typeof descriptor?.value === "function") {
    Object.defineProperty(prototype, name, {
      value(this: Delegating, ...args: unknown[]) {
        const real = this[kReal]() as unknown as Record<string, (...a: unknown[]) => unknown>;
        return real[name]!(...args);
      },
      configurable: true,
      writable: true,
    });
  }
}

// undici's own code (`new Request(request)`, `fetch(request)`) reads a Request's internal
// symbol slots rather than its public members: forward them too, the signal slot to this
// request's signal and the rest to the real Request. Found on a sample, not named, so this
// follows whatever undici this Node bundles.
const sample = new Request("http://localhost/") as unknown as Record<symbol, unknown>;
for (const slot of Object.getOwnPropertySymbols(sample)) {
  const isSignal = sample[slot] instanceof AbortSignal;
  Object.defineProperty(prototype, slot, {
    get(this: Delegating & { signal: AbortSignal }) {
      return isSignal ? this.signal : (this[kReal]() as unknown as Record<symbol, unknown>)[slot];
    },
    configurable: true,
  });
}

Object.setPrototypeOf(NodeRequest.prototype, Request.prototype);

/**
 * Whether undici reads another Request's state through the slots forwarded above. Node 22 and
 * 24's undici keeps it under symbols; Node 26's (undici 8) in private fields, which no other
 * object can have: there `new Request(shim)` and `fetch(shim)` would fail (or read the shim as a
 * URL), so the adapter hands handlers a real Request instead and the laziness is lost. Probed
 * once, not read off a version number, so a future undici decides by what it does.
 */
const SHIM_IS_WHOLE = (() => {
  try {
    const req = { method: "GET", rawHeaders: ["x-probe", "1"] } as unknown as IncomingMessage;
    const res = { closed: true, writableFinished: true } as unknown as ServerResponse;
    const shim = new NodeRequest(req, res, "http://probe.invalid/") as unknown as Request;
    return new Request(shim).headers.get("x-probe") === "1";
  } catch {
    return false;
  }
})();

/**
 * A Request over `req` whose URL is `url` (already resolved against the server's origin).
 * `res` tells its signal when the client went away.
 */
export function nodeRequest(req: IncomingMessage, res: ServerResponse, url: string): Request {
  const shim = new NodeRequest(req, res, url);
  if (SHIM_IS_WHOLE) return shim as unknown as Request;
  // A real Request with the same parts: the body stream already flowing, the signal that
  // follows the response.
  return shim[kReal](shim.signal);
}
