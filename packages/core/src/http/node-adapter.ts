import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { knownBodyOf } from "./_known-body.js";
import { lingerOnClose } from "./_lingering-close.js";
import { nodeRequest } from "./_node-request.js";
import type { ServerEnv } from "./app.js";
import { createLogger, type Logger } from "./logger.js";
import { BODYLESS_METHODS, headersFromRaw, requestBodyStream } from "./request-body-stream.js";

export { requestBodyStream };

/** Anything that answers a web-standard Request: `app.fetch`, or a plain function. */
export type FetchHandler = (request: Request, env: ServerEnv) => Promise<Response> | Response;

/**
 * A node-level handler that may answer a request before the web-standard kit sees it (a hot path
 * that must not pay for a web Request and Response). It returns true when it took the request,
 * and then owns `res` entirely; false leaves the request, untouched, to the fetch handler.
 */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Options of {@link serve}. */
export interface ServeOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  log?: Logger;
  /** Close idle keep-alive sockets after this long (ms). */
  keepAliveTimeout?: number;
  /** Runs first on every request (after refused methods); see {@link NodeHandler}. */
  nodeHandler?: NodeHandler;
}

/** A listening server. */
export interface RunningServer {
  server: Server;
  host: string;
  port: number;
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Stop accepting, let in-flight requests finish briefly, then drop the rest. */
  close(graceMs?: number): Promise<void>;
}

// Methods fetch's Request refuses to carry (so no handler could ever see them) and no route
// serves: answered here with a plain 405, never as a failure to log (a TRACE flood must not
// become an error-log flood).
const REFUSED_METHODS = new Set(["TRACE", "TRACK", "CONNECT"]);
const ALLOWED = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
const METHOD_NOT_ALLOWED = JSON.stringify({
  detail: "Method not allowed",
  code: "method_not_allowed",
});

/**
 * Turn a node request into a web Request whose body streams (never buffered here). The origin
 * is the server's own address: a client's Host header never decides how the URL parses.
 */
export function toWebRequest(req: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const method = req.method ?? "GET";
  const init: RequestInit & { duplex?: "half" } = {
    method,
    headers: headersFromRaw(req.rawHeaders),
    signal,
  };
  if (!BODYLESS_METHODS.has(method)) {
    init.body = requestBodyStream(req);
    init.duplex = "half";
  }
  return new Request(requestUrl(req, origin), init);
}

/** The absolute URL of a node request, resolved against the server's own origin. */
function requestUrl(req: IncomingMessage, origin: string): string {
  const target = req.url?.startsWith("/") ? req.url : `/${req.url ?? ""}`;
  return new URL(target, origin).href;
}

/** Write a web Response to a node response, streaming with backpressure. */
export async function writeWebResponse(
  res: ServerResponse,
  response: Response,
  method: string,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  const cookies: string[] = [];
  // Iteration yields each Set-Cookie on its own (in order) and every other header combined.
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") cookies.push(value);
    else headers[name] = value;
  }
  if (cookies.length) headers["set-cookie"] = cookies;
  // A request body nobody read to the end (a refusal, a 413) must not stay on a keep-alive
  // socket, where its bytes would be parsed as the next request: close after replying.
  if (res.req && !res.req.complete && !BODYLESS_METHODS.has(method)) {
    headers.connection = "close";
    lingerOnClose(res.req);
  }
  const known = knownBodyOf(response);
  if (known !== undefined) {
    // A body the kit built from a string: one write, with its length, no stream to read.
    headers["content-length"] = String(Buffer.byteLength(known));
    res.writeHead(response.status, response.statusText || undefined, headers);
    res.end(method === "HEAD" ? undefined : known);
    return;
  }
  res.writeHead(response.status, response.statusText || undefined, headers);
  if (!response.body || method === "HEAD" || response.status === 204 || response.status === 304) {
    await response.body?.cancel().catch(() => {});
    res.end();
    return;
  }
  // A body of unknown length (SSE, a chunked upstream) may not produce its first byte for a
  // while: send the headers now. With a known length they go out with the first chunk.
  if (!response.headers.has("content-length")) res.flushHeaders();
  const reader = response.body.getReader();
  const onClose = () => void reader.cancel().catch(() => {});
  res.once("close", onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) break;
      if (!res.write(value)) await Promise.race([once(res, "drain"), once(res, "close")]);
    }
    res.end();
  } catch {
    // The body failed mid-stream: the status is already sent, so cut the connection.
    res.destroy();
  } finally {
    res.off("close", onClose);
  }
}

/** Listen on host:port and answer every request with `handler`. */
export async function serve(
  handler: FetchHandler,
  options: ServeOptions = {},
): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? createLogger({ name: "http" });
  const nodeHandler = options.nodeHandler;
  let origin = "";
  const server = createServer(async (req, res) => {
    const method = req.method ?? "GET";
    if (REFUSED_METHODS.has(method.toUpperCase())) {
      res.writeHead(405, {
        allow: ALLOWED,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(METHOD_NOT_ALLOWED)),
        connection: "close",
      });
      res.end(METHOD_NOT_ALLOWED);
      return;
    }
    if (nodeHandler) {
      try {
        if (nodeHandler(req, res)) return;
      } catch (error) {
        // A node handler that throws before taking the request must not leave it unanswered.
        log.error("node handler failed", { method, error });
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json", connection: "close" });
          res.end(JSON.stringify({ detail: "Internal Server Error", code: "internal_error" }));
        } else {
          res.destroy();
        }
        return;
      }
    }
    try {
      // Lazy: the URL is resolved now, headers, body and signal only if the handler reads them.
      const request = nodeRequest(req, res, requestUrl(req, origin));
      const env: ServerEnv = { rawTarget: req.url ?? "/" };
      if (req.socket.remoteAddress) env.remoteAddress = req.socket.remoteAddress;
      const response = await handler(request, env);
      await writeWebResponse(res, response, method);
    } catch (error) {
      log.error("request failed in the node adapter", { method, error });
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "Internal Server Error", code: "internal_error" }));
      } else {
        res.destroy();
      }
    }
  });
  // node hands CONNECT to a "connect" listener (none would drop the socket unanswered).
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    socket.on("error", () => {});
    socket.end(
      "HTTP/1.1 405 Method Not Allowed\r\n" +
        `Allow: ${ALLOWED}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(METHOD_NOT_ALLOWED)}\r\nConnection: close\r\n\r\n` +
        METHOD_NOT_ALLOWED,
    );
  });
  server.keepAliveTimeout = options.keepAliveTimeout ?? 5_000;
  server.listen(options.port ?? 0, host);
  await once(server, "listening");
  const address = server.address() as AddressInfo;
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  origin = `http://${urlHost}:${address.port}`;
  return {
    server,
    host,
    port: address.port,
    url: origin,
    async close(graceMs = 2_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
