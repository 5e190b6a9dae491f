// The native passthrough's undici dispatch handler: a challenge's answer written straight into
// the client's node response, chunk by chunk, with backpressure both ways and no Readable or web
// stream in between. What it writes is what the kit's route writes for the same answer (see
// UpstreamClient.send and core's writeWebResponse): the same status, reason, headers and body,
// the same 502s, and the same cut connection when a body fails after its status was sent.
import type { IncomingMessage, ServerResponse } from "node:http";
import { REQUEST_ID_HEADER } from "@platform/core";
import { type Dispatcher, util } from "undici";
import type { ProxyObservation } from "./_proxy-observation.js";
import { upstreamResponseHeaderObject } from "./forward-headers.js";
import {
  forwardedReason,
  hasNoBody,
  invalidUpstreamStatus,
  type UpstreamClient,
} from "./upstream-client.js";

/** What the writer answers for, and how it answers a failure before the response started. */
export interface UpstreamResponseWriterOptions {
  req: IncomingMessage;
  res: ServerResponse;
  slug: string;
  requestId: string;
  upstream: UpstreamClient;
  /** The forwarded request body, if any: released when the exchange fails. */
  body: { destroy(): void } | null;
  /** Answer an error (an HttpError) as the kit would; only called before anything was written. */
  fail(error: unknown): void;
  /** Hears the challenge's status when its head is written (metrics, the request's span). */
  observation?: ProxyObservation;
}

interface Head {
  status: number;
  reason: string;
  headers: Record<string, string>;
}

// Methods whose request never has a body the adapter reads (so never "unread" at the answer).
const BODYLESS_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD"]);

/**
 * Where an exchange is: waiting for the final status; holding a bodyless answer until the
 * exchange ends; streaming a body; or over (answered, refused or cut).
 */
type State = "waiting" | "held" | "streaming" | "over";

/** One forwarded request's dispatch handler (undici's handler interface, v1 callbacks). */
export class UpstreamResponseWriter implements Dispatcher.DispatchHandler {
  private abortUpstream: ((error?: Error) => void) | undefined;
  private resumeUpstream: (() => void) | undefined;
  private clientGone = false;
  private state: State = "waiting";
  private heldHead: Head | undefined;
  private readonly method: string;

  constructor(private readonly options: UpstreamResponseWriterOptions) {
    this.method = options.req.method ?? "GET";
  }

  /** The client went away: abort the exchange, now or as soon as it is connected. */
  clientLeft(): void {
    this.clientGone = true;
    this.abortUpstream?.();
  }

  onConnect(abort: (error?: Error) => void): void {
    this.abortUpstream = abort;
    if (this.clientGone) abort();
  }

  onHeaders(
    statusCode: number,
    rawHeaders: Buffer[],
    resume: () => void,
    statusText: string,
  ): boolean {
    // 1xx is never the answer (undici's own request() waits for the final one as well).
    if (statusCode < 200 || this.state !== "waiting") return true;
    if (statusCode > 599) {
      this.refuse(invalidUpstreamStatus(this.options.slug, statusCode));
      return false;
    }
    const { res, requestId } = this.options;
    this.resumeUpstream = resume;
    try {
      const headers = upstreamResponseHeaderObject(util.parseHeaders(rawHeaders));
      headers[REQUEST_ID_HEADER] = requestId;
      const head: Head = { status: statusCode, reason: forwardedReason(statusText), headers };
      if (hasNoBody(this.method, statusCode)) {
        this.heldHead = head;
        this.state = "held";
        return true;
      }
      this.writeHead(head);
      this.coalesceThisTick();
      // A body of unknown length (SSE, a chunked challenge) may not produce its first byte for
      // a while: send the headers now. With a known length they go out with the first chunk.
      if (headers["content-length"] === undefined) res.flushHeaders();
    } catch (error) {
      // Headers node refuses to write: the kit's Response would have refused them (its 500).
      this.refuse(error);
      return false;
    }
    this.state = "streaming";
    return true;
  }

  onData(chunk: Buffer): boolean {
    const { res } = this.options;
    if (this.state !== "streaming" || res.destroyed) return true;
    if (res.write(chunk)) return true;
    res.once("drain", this.resumeUpstream!);
    return false;
  }

  onComplete(): void {
    if (this.state === "held") this.endBodyless();
    else if (this.state === "streaming") this.options.res.end();
    this.state = "over";
  }

  onError(error: Error): void {
    this.options.body?.destroy();
    const state = this.state;
    this.state = "over";
    // The kit writes a bodyless answer whatever became of the rest (`dump().catch(() => {})`).
    if (state === "held") this.endBodyless();
    else if (state === "waiting")
      this.options.fail(this.options.upstream.failure(this.options.slug, error));
    // The status is already sent: all that can tell the client is a cut connection.
    else if (state === "streaming") this.options.res.destroy();
  }

  private endBodyless(): void {
    const head = this.heldHead!;
    this.heldHead = undefined;
    try {
      this.writeHead(head);
    } catch (error) {
      this.options.fail(error); // nothing was written: answered as the kit's 500
      return;
    }
    this.options.res.end();
  }

  private writeHead(head: Head): void {
    const { req, res } = this.options;
    // A request body nobody read to the end must not stay on a keep-alive socket, where its
    // bytes would be parsed as the next request (as core's adapter does).
    if (!req.complete && !BODYLESS_METHODS.has(this.method)) head.headers.connection = "close";
    res.writeHead(head.status, head.reason || undefined, head.headers);
    this.options.observation?.upstreamAnswered(head.status);
  }

  // A small answer usually arrives whole, in one read from the challenge: its head, body and
  // end are then written in this same tick. Corking the socket until the next tick sends them
  // in one syscall instead of one per write; a body still to come is not delayed beyond it.
  private coalesceThisTick(): void {
    const socket = this.options.res.socket;
    if (!socket || socket.writableCorked) return;
    socket.cork();
    process.nextTick(() => socket.uncork());
  }

  // Answer `error` instead of the challenge's answer, and give up on that answer (as the kit
  // does by destroying its response body).
  private refuse(error: unknown): void {
    this.state = "over";
    this.options.fail(error);
    const abort = this.abortUpstream;
    if (abort) queueMicrotask(() => abort());
  }
}
