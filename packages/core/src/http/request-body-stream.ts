// A node request's body and headers as web-standard parts, shared by the eager `toWebRequest`
// and the lazy request the adapter hands to handlers (_node-request.ts).
import type { IncomingMessage } from "node:http";

/**
 * The request body as a web stream, with backpressure (the socket is paused while the stream's
 * queue is full). Not `Readable.toWeb(req)`: on Node 22 (and 20; not 26), cancelling that
 * stream while a chunk is on its way (a 413, a proxy whose upstream failed) makes it enqueue
 * into a closed controller and throw an uncaught ERR_INVALID_STATE (nodejs/node#64529).
 * Cancelling this one just stops listening; the adapter then closes the connection instead of
 * leaving unread bytes on a keep-alive socket.
 */
export function requestBodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          if (done) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once("end", () => {
          if (done) return;
          done = true;
          controller.close();
        });
        req.once("error", (error) => {
          if (done) return;
          done = true;
          controller.error(error);
        });
        req.once("close", () => {
          if (done) return;
          done = true;
          // The client went away mid-body: readers see an error, not a silently short body.
          controller.error(new Error("request body aborted by the client"));
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        done = true;
        req.pause();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
}

/** Web Headers from node's raw header list, in the order sent. */
export function headersFromRaw(rawHeaders: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    try {
      headers.append(rawHeaders[i]!, rawHeaders[i + 1]!);
    } catch {
      // A header value undici refuses (invalid bytes) is dropped rather than failing the request.
    }
  }
  return headers;
}

/** Methods whose requests carry no body (fetch's Request refuses one on them). */
export const BODYLESS_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD"]);
