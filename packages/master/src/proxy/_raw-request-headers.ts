// A node request's headers read the way a web `Headers` built from them would read, without
// building one: the native passthrough judges the very same values the kit's route does.
import type { IncomingMessage } from "node:http";
import { fetchHeaderValue, type RequestHeaderReader } from "./forward-headers.js";

/**
 * `get` and `forEach` over `req.rawHeaders` with `Headers` semantics: names case-insensitive and
 * lower-cased, repeated headers joined with ", " (Set-Cookie kept apart), values trimmed, and
 * `forEach` in sorted name order. Built once, on first use.
 */
export class RawRequestHeaders implements RequestHeaderReader {
  private values: Map<string, string> | undefined;
  // `forEach` yields each Set-Cookie apart, like Headers; no other header does.
  private cookies: string[] = [];

  constructor(private readonly raw: readonly string[]) {}

  static of(req: IncomingMessage): RawRequestHeaders {
    return new RawRequestHeaders(req.rawHeaders);
  }

  get(name: string): string | null {
    const lower = name.toLowerCase();
    const map = this.map();
    if (lower === "set-cookie") return this.cookies.length ? this.cookies.join(", ") : null;
    return map.get(lower) ?? null;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  forEach(callback: (value: string, name: string) => void): void {
    const map = this.map();
    const names = [...map.keys()];
    if (this.cookies.length) names.push("set-cookie");
    names.sort();
    for (const name of names) {
      if (name === "set-cookie") for (const cookie of this.cookies) callback(cookie, name);
      else callback(map.get(name)!, name);
    }
  }

  private map(): Map<string, string> {
    if (this.values) return this.values;
    const values = new Map<string, string>();
    const raw = this.raw;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const value = fetchHeaderValue(raw[i + 1]!);
      if (name === "set-cookie") {
        this.cookies.push(value);
        continue;
      }
      const previous = values.get(name);
      values.set(name, previous === undefined ? value : `${previous}, ${value}`);
    }
    this.values = values;
    return values;
  }
}
