// The native passthrough's request body: the client's node request, streamed to undici as it
// arrives. Not the request itself: undici destroys a body it stops using (the challenge failed),
// and destroying an IncomingMessage destroys its socket, so the client would get a reset instead
// of the 502. Destroying this one only stops reading; the answer then closes the connection.
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";

// As the node adapter's web body stream (64 KiB): the same buffering between client and challenge.
const HIGH_WATER_MARK = 64 * 1024;

/** A Readable over `req`'s body, with backpressure; destroying it pauses `req`, never kills it. */
export function nodeRequestBody(req: IncomingMessage): Readable {
  let finished = false;
  const detach = () => {
    finished = true;
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    req.off("close", onClose);
  };
  const body = new Readable({
    highWaterMark: HIGH_WATER_MARK,
    read() {
      req.resume();
    },
    destroy(error, callback) {
      if (!finished) {
        detach();
        req.pause();
      }
      callback(error);
    },
  });
  const onData = (chunk: Buffer) => {
    if (!body.push(chunk)) req.pause();
  };
  const onEnd = () => {
    detach();
    body.push(null);
  };
  const onError = (error: Error) => {
    detach();
    body.destroy(error);
  };
  const onClose = () => {
    // The client went away mid-body: the challenge sees an error, not a silently short body.
    detach();
    body.destroy(new Error("request body aborted by the client"));
  };
  req.on("data", onData);
  req.once("end", onEnd);
  req.once("error", onError);
  req.once("close", onClose);
  return body;
}
