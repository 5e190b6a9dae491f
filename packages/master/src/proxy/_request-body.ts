// Request bodies forwarded upstream. A body the proxy stops using is cancelled: core's node
// adapter then closes that client connection instead of reading the rest of it.
import { Readable } from "node:stream";

/** A node Readable over a web body for undici; destroying it (upstream failed) cancels the body. */
export function streamedBody(stream: ReadableStream<Uint8Array>): Readable {
  const reader = stream.getReader();
  let finished = false;
  return new Readable({
    async read() {
      try {
        const { done, value } = await reader.read();
        if (done) {
          finished = true;
          this.push(null);
        } else {
          this.push(value);
        }
      } catch (error) {
        finished = true;
        this.destroy(error as Error);
      }
    },
    destroy(error, callback) {
      if (!finished) void reader.cancel().catch(() => {});
      callback(error);
    },
  });
}
