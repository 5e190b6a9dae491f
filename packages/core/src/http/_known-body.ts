// Responses the kit builds from a string it already holds (JSON, errors, pages) keep that string,
// so the node adapter writes it in one call instead of reading it back through a web stream.
// They are also cheap to make: `new Response(text)` builds a ReadableStream for the body on the
// spot, which is most of what a response costs; this one builds it only if someone reads the
// body as a web Response (app.fetch in tests, a caller of the app), never on the adapter's path.
const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

const kBody: unique symbol = Symbol("body as a web Response");

/** A Response whose body is a string held as is; the stream exists only once asked for. */
class KnownBodyResponse extends Response {
  readonly #text: string;
  #real: Response | undefined;

  constructor(text: string, init: ResponseInit) {
    // Same refusal as new Response(text, init) for a status that cannot have a body.
    if (NULL_BODY_STATUS.has(init.status ?? 200)) new Response(text, init);
    super(null, init);
    this.#text = text;
    // What new Response(string) adds when the caller named no type.
    if (typeof text === "string" && !this.headers.has("content-type")) {
      this.headers.set("content-type", "text/plain;charset=UTF-8");
    }
  }

  /** The text `response` was built from, if the kit built it and nobody read it yet. */
  static textOf(response: Response): string | undefined {
    if (!(#text in response)) return undefined;
    return response.bodyUsed ? undefined : response.#text;
  }

  /** The body as a real Response, made once: what every body member reads. */
  [kBody](): Response {
    if (this.#real === undefined) this.#real = new Response(this.#text);
    return this.#real;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this[kBody]().body;
  }

  override get bodyUsed(): boolean {
    return this.#real?.bodyUsed ?? false;
  }

  override clone(): Response {
    // A used or locked body: let Response.clone() throw its own error.
    if (this.#real?.bodyUsed || this.#real?.body?.locked) return this.#real.clone();
    return new KnownBodyResponse(this.#text, {
      status: this.status,
      statusText: this.statusText,
      headers: this.headers,
    });
  }
}

// The body readers (text(), json(), arrayBuffer(), blob(), formData(), and bytes() where this
// Node has it) read the real body Response, whatever this Node's Response has.
for (const name of Object.getOwnPropertyNames(Response.prototype)) {
  if (name === "constructor" || Object.hasOwn(KnownBodyResponse.prototype, name)) continue;
  const descriptor = Object.getOwnPropertyDescriptor(Response.prototype, name);
  if (typeof descriptor?.value !== "function") continue;
  Object.defineProperty(KnownBodyResponse.prototype, name, {
    value(this: KnownBodyResponse, ...args: unknown[]) {
      const real = this[kBody]() as unknown as Record<string, (...a: unknown[]) => unknown>;
      return real[name]!(...args);
    },
    configurable: true,
    writable: true,
  });
}

/** A Response whose body is `text`, registered for the adapter's fast path. */
export function textResponse(text: string, init: ResponseInit): Response {
  return new KnownBodyResponse(text, init);
}

/** The text a Response was built from, if the kit built it and nobody read it yet. */
export function knownBodyOf(response: Response): string | undefined {
  return KnownBodyResponse.textOf(response);
}
