/** The header that carries a request's id end to end (client -> master -> challenge). */
export const REQUEST_ID_HEADER = "x-request-id";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Reuse the caller's request id when it is short and plain (so a trace crosses services),
 * otherwise mint one: an attacker-chosen id must not inject text into our logs.
 */
export function requestIdOf(request: Request): string {
  const incoming = request.headers.get(REQUEST_ID_HEADER);
  return incoming && SAFE_ID.test(incoming) ? incoming : crypto.randomUUID();
}
