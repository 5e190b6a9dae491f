/** One server-sent event. `data` that is not a string is sent as JSON. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: unknown;
  /** Reconnection delay the client should use, in ms. */
  retry?: number;
}

/** What an event source is told when a client (re)connects. */
export interface SseSourceContext {
  /** The last event id the client saw (Last-Event-ID header or `last_event_id` query), if any. */
  lastEventId: string | null;
  /** Aborted when the client goes away: stop producing. */
  signal: AbortSignal;
}

/** Options of {@link sseResponse}. */
export interface SseOptions {
  /** Comment line sent when idle so proxies keep the stream open; default 15 s, 0 disables. */
  heartbeatMs?: number;
  headers?: HeadersInit;
}

const encoder = new TextEncoder();

function singleLine(value: string, field: string): string {
  if (/[\r\n]/.test(value)) throw new Error(`SSE ${field} must be a single line`);
  return value;
}

/** Serialise one event in the text/event-stream wire format (multi-line data is split). */
export function formatSseEvent(event: SseEvent): string {
  let out = "";
  if (event.id !== undefined) out += `id: ${singleLine(event.id, "id")}\n`;
  if (event.event !== undefined) out += `event: ${singleLine(event.event, "event")}\n`;
  if (event.retry !== undefined) out += `retry: ${Math.max(0, Math.floor(event.retry))}\n`;
  const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** The id a reconnecting client wants to resume after. */
export function lastEventIdOf(request: Request): string | null {
  const header = request.headers.get("last-event-id");
  if (header) return header;
  return new URL(request.url).searchParams.get("last_event_id");
}

/**
 * Stream `source`'s events as a text/event-stream Response, with a heartbeat comment while
 * idle. The source learns where a reconnecting client left off and is stopped (its iterator
 * returned, its signal aborted) when the client disconnects.
 */
export function sseResponse(
  request: Request,
  source: (context: SseSourceContext) => AsyncIterable<SseEvent>,
  options: SseOptions = {},
): Response {
  const abort = new AbortController();
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let iterator: AsyncIterator<SseEvent> | undefined;

  const stop = () => {
    if (heartbeat) clearInterval(heartbeat);
    abort.abort();
  };

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        if (!abort.signal.aborted) controller.enqueue(encoder.encode(text));
      };
      // An initial comment makes the headers and first bytes leave every buffer at once.
      send(": connected\n\n");
      if (heartbeatMs > 0) heartbeat = setInterval(() => send(": ping\n\n"), heartbeatMs);
      iterator = source({ lastEventId: lastEventIdOf(request), signal: abort.signal })[
        Symbol.asyncIterator
      ]();
      const pump = async () => {
        try {
          for (;;) {
            const next = await iterator!.next();
            if (next.done || abort.signal.aborted) break;
            send(formatSseEvent(next.value));
          }
          stop();
          controller.close();
        } catch (error) {
          stop();
          if (!abort.signal.aborted) controller.error(error);
        }
      };
      void pump();
    },
    async cancel() {
      stop();
      await iterator?.return?.();
    },
  });

  request.signal?.addEventListener("abort", stop, { once: true });
  const headers = new Headers(options.headers);
  headers.set("content-type", "text/event-stream; charset=utf-8");
  headers.set("cache-control", "no-cache, no-transform");
  headers.set("x-accel-buffering", "no");
  return new Response(stream, { status: 200, headers });
}
