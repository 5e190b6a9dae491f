import { HttpError } from "./http-error.js";
import { ValidationError } from "./validation-error.js";

/** Default cap on a request body read by the kit: 1 MiB. Routes raise or lower it. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

function tooLarge(limit: number): HttpError {
  return new HttpError(413, "payload_too_large", `Request body exceeds ${limit} bytes`, {
    extra: { limit_bytes: limit },
  });
}

/**
 * Read the whole body, refusing (413) as soon as it passes `limit` bytes: a declared
 * Content-Length over the limit is refused before a byte is read, and a chunked body is
 * counted as it streams, so a lying or absent length cannot get past the cap.
 */
export async function readBodyWithLimit(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge(limit);
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** The media type of a request, lower-cased and without parameters ("" when absent). */
export function mediaType(request: Request): string {
  const value = request.headers.get("content-type") ?? "";
  return (value.split(";")[0] ?? "").trim().toLowerCase();
}

/** True for application/json and any `+json` structured suffix. */
export function isJsonMediaType(type: string): boolean {
  return type === "application/json" || type.endsWith("+json");
}

/** 415 unless the request's media type is one of `accepted`. */
export function requireMediaType(request: Request, accepted: readonly string[]): string {
  const type = mediaType(request);
  const ok = accepted.some((want) =>
    want === "application/json" ? isJsonMediaType(type) : type === want,
  );
  if (!ok) {
    throw new HttpError(
      415,
      "unsupported_media_type",
      `Content-Type must be ${accepted.join(" or ")}${type ? `, got ${type}` : ""}`,
    );
  }
  return type;
}

/**
 * How deeply a JSON body may nest. Validation clones and walks the value recursively, so a
 * few kilobytes of `[[[[...]]]]` overflowed the stack and answered 500 (the OpenAPI fuzz suite
 * found it); no schema here comes near this depth.
 */
export const MAX_JSON_DEPTH = 128;

/** The nesting depth of a parsed JSON value, walked without recursion; stops past `limit`. */
function depthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Parse JSON bytes; invalid JSON is a 422 in the same shape as any validation failure. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (text.trim() === "") {
    throw new ValidationError([{ loc: ["body"], msg: "Field required", type: "missing" }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const msg = error instanceof Error ? error.message : "Invalid JSON";
    throw new ValidationError([
      { loc: ["body"], msg: `JSON decode error: ${msg}`, type: "json_invalid" },
    ]);
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) {
    throw new ValidationError([
      {
        loc: ["body"],
        msg: `JSON decode error: nested deeper than ${MAX_JSON_DEPTH} levels`,
        type: "json_invalid",
      },
    ]);
  }
  return value;
}
