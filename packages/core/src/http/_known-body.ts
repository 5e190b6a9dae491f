// Responses the kit builds from a string it already holds (JSON, errors, pages) remember that
// string here, so the node adapter writes it in one call instead of reading it back through a
// web stream: on the hot path that saves a stream read and a separate header write per request.
const knownBodies = new WeakMap<Response, string>();

/** A Response whose body is `text`, registered for the adapter's fast path. */
export function textResponse(text: string, init: ResponseInit): Response {
  const response = new Response(text, init);
  knownBodies.set(response, text);
  return response;
}

/** The text a Response was built from, if the kit built it and nobody read it yet. */
export function knownBodyOf(response: Response): string | undefined {
  return response.bodyUsed ? undefined : knownBodies.get(response);
}
