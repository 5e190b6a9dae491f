// The signed upload route on node's own request and response, for the public listener: the same
// answers as the kit's route (signed-upload-route.ts) without a web Request, body stream or
// Response per upload. It takes only what the kit's route would take and read: a plain target,
// a body of declared length within the limit, and the prechecks passed. Anything else (another
// spelling of the path, a chunked or oversized body, a missing signature header, a wrong media
// type or file name) is declined before a byte of the body is read, and the kit answers it.
// From the body on it answers everything itself, with the route's own checks (`admitUpload`),
// the kit's error bytes and the passthrough's response writer.
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Logger, type NodeHandler, requestIdOf } from "@platform/core";
import { ClientWatch } from "./_client-watch.js";
import { writeKitErrorAnswer } from "./_kit-error-answer.js";
import { observe } from "./_proxy-observation.js";
import { RawRequestHeaders } from "./_raw-request-headers.js";
import {
  admitUpload,
  BRIDGE_PATH,
  precheck,
  type SignedUploadDependencies,
  type UploadVerifier,
} from "./_upload-admission.js";
import { UpstreamResponseWriter } from "./_upstream-response-writer.js";

// The route's targets in their one plain spelling: a slug the kit would not decode differently
// and a query of RFC 3986 query characters only, which the kit's URL parse leaves as they are
// (so `filename` reads the same both ways, and the signed path is the target itself).
const UPLOAD_TARGET =
  /^\/v1\/challenges\/([a-z0-9][a-z0-9-]*)\/submissions(\?[A-Za-z0-9\-._~%!$&'()*+,;=:@/?]*)?$/;
const DECIMAL = /^\d{1,15}$/;

/**
 * A handler for core's `serve({ nodeHandler })` answering the signed uploads it can take whole,
 * exactly as the kit's route would (see the file comment); false leaves the request untouched.
 * Built by `registerSignedUploadRoute`, which shares its verifier with the kit's route.
 */
export function createNativeSignedUpload(
  deps: SignedUploadDependencies & { log: Logger },
  verify: UploadVerifier,
): NodeHandler {
  return (req, res) => {
    if (req.method !== "POST") return false;
    const rawTarget = req.url ?? "/";
    const match = UPLOAD_TARGET.exec(rawTarget);
    if (!match) return false;
    const slug = match[1]!;
    const headers = RawRequestHeaders.of(req);
    // A chunked body's size is known only once read: the kit reads it against the limit.
    if (headers.get("transfer-encoding") !== null) return false;
    const declared = headers.get("content-length");
    if (declared === null || !DECIMAL.test(declared)) return false;
    const length = Number(declared);
    if (length > deps.uploadLimitBytes) return false; // the kit's 413, body unread
    let filename: string | undefined;
    try {
      filename = precheck({ headers }, queryOf(match[2]), slug);
    } catch {
      return false; // the kit's 401, 404, 415 or 400, body unread
    }
    void answer(deps, verify, { req, res, headers, rawTarget, slug, filename, length });
    return true;
  };
}

function queryOf(search: string | undefined): Pick<URL, "searchParams"> {
  return { searchParams: new URLSearchParams(search ?? "") };
}

interface TakenUpload {
  req: IncomingMessage;
  res: ServerResponse;
  headers: RawRequestHeaders;
  rawTarget: string;
  slug: string;
  filename: string | undefined;
  length: number;
}

async function answer(
  deps: SignedUploadDependencies & { log: Logger },
  verify: UploadVerifier,
  upload: TakenUpload,
): Promise<void> {
  const { req, res, headers, slug } = upload;
  // requestIdOf reads only `request.headers.get`, as in the native passthrough.
  const requestId = requestIdOf({ headers } as unknown as Request);
  // Metrics and (tracing on) this upload's span; a shared no-op when both are off.
  const observation = observe(deps, "upload", headers);
  observation.names(slug);
  const fail = (error: unknown) => {
    observation.refused(error);
    void writeKitErrorAnswer(res, "POST", error, requestId, deps.log);
  };
  const client = new ClientWatch(res, observation);
  const body = await readDeclaredBody(req, upload.length);
  if (body === null) {
    observation.clientLeft();
    return; // the client went away mid-body: nobody to answer
  }
  try {
    const admitted = await admitUpload(deps, verify, {
      headers,
      rawTarget: upload.rawTarget,
      body,
      slug,
      filename: upload.filename,
      identity: { slug, requestId, remoteAddress: req.socket.remoteAddress },
      observation,
    });
    deps.log.info("submission upload verified", { request_id: requestId, ...admitted.logFields });
    if (client.gone) return;
    const writer = new UpstreamResponseWriter({
      req,
      res,
      slug,
      requestId,
      upstream: deps.upstream,
      body: null,
      fail,
      observation,
    });
    client.follow(writer);
    deps.upstream.dispatch(
      {
        slug,
        base: admitted.base,
        target: BRIDGE_PATH,
        method: "POST",
        headers: admitted.headers,
        body,
      },
      writer,
    );
  } catch (error) {
    fail(error);
  }
}

/**
 * The whole body of a request whose length node's parser enforces (content-length, no
 * transfer-encoding): one buffer, no stream. Null when the client goes away before its end.
 */
function readDeclaredBody(req: IncomingMessage, length: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const body = Buffer.allocUnsafe(length);
    let offset = 0;
    req.on("data", (chunk: Buffer) => {
      // The parser never delivers more than declared; the check keeps a bug from overflowing.
      offset += chunk.copy(body, offset);
    });
    req.once("end", () => resolve(offset === length ? body : null));
    req.once("error", () => resolve(null));
    req.once("close", () => {
      if (!req.complete) resolve(null);
    });
  });
}
