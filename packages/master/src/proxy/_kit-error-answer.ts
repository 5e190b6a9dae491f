// An error answered by the native passthrough exactly as the app kit answers it: an HttpError
// renders itself; anything else is logged and becomes a 500 without internals; both carry the
// request id. Written by core's own node adapter code, so the bytes are the kit's bytes.
import type { ServerResponse } from "node:http";
import {
  isHttpError,
  json,
  type Logger,
  REQUEST_ID_HEADER,
  writeWebResponse,
} from "@platform/core";

/** Write `error` to `res` as the kit's `app.fetch` and core's `serve` would. */
export async function writeKitErrorAnswer(
  res: ServerResponse,
  method: string,
  error: unknown,
  requestId: string,
  log: Logger,
): Promise<void> {
  let response: Response;
  if (isHttpError(error)) {
    response = error.toResponse();
  } else {
    log.error("unhandled error", { request_id: requestId, method, error });
    const body = { detail: "Internal Server Error", code: "internal_error", request_id: requestId };
    response = json(body, { status: 500 });
  }
  response.headers.set(REQUEST_ID_HEADER, requestId);
  try {
    await writeWebResponse(res, response, method);
  } catch (failure) {
    log.error("request failed in the node adapter", { method, error: failure });
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: "Internal Server Error", code: "internal_error" }));
    } else {
      res.destroy();
    }
  }
}
