import { createLogger, type Logger } from "@platform/core";
import { ApiPromise, WsProvider } from "@polkadot/api";
import type { ApiDecoration } from "@polkadot/api/types";
import type { Header } from "@polkadot/types/interfaces";
import { routePolkadotConsole } from "./polkadot-console.js";

/** A block by number and 0x-hex hash. */
export interface BlockRef {
  number: number;
  hash: string;
}

/** Options of {@link createChainClient}. */
export interface ChainClientOptions {
  /** `ws://` or `wss://` URLs, tried in this order; on trouble the next one takes over (round robin). */
  endpoints: readonly string[];
  /** Bound on every call; default 10,000 ms. */
  callTimeoutMs?: number;
  /**
   * Bound on each step of opening a connection (socket, runtime metadata, head subscription),
   * and on a call's wait for a connection; default the larger of 15,000 ms and twice the call
   * timeout (decoding finney's 300 KB metadata takes a while on a busy machine).
   */
  connectTimeoutMs?: number;
  /** The chain's block time; default 12,000 ms (finney). Sets the head watchdog and head waits. */
  blockTimeMs?: number;
  /** No new head for this many block times means the connection is half-open; default 3. */
  staleHeadBlocks?: number;
  /** The genesis hash every endpoint must serve; default: whatever the first endpoint reached serves. */
  genesisHash?: string;
  log?: Logger;
}

/** What the client reports of itself (`platform validator status`, the master's dashboard). */
export interface ChainClientStatus {
  /** The endpoint in use (userinfo and query removed), or the one being tried. */
  endpoint: string | null;
  connected: boolean;
  genesisHash: string | null;
  /** The newest head seen, and when (ISO time). */
  head: { number: number; hash: string; seenAt: string } | null;
  /** Connections dropped and replaced since the client started. */
  reconnects: number;
  lastError: string | null;
  closed: boolean;
}

/** One live connection: its api, the raw provider, and a signal that fires when it is dropped. */
export interface ChainConnection {
  api: ApiPromise;
  provider: WsProvider;
  /** The endpoint, safe to log. */
  endpoint: string;
  /** Aborted (with a {@link ChainError}) when this connection is dropped for any reason. */
  lost: AbortSignal;
}

/** Why a chain operation did not complete. */
export type ChainErrorKind = "timeout" | "unavailable" | "connection_lost" | "closed" | "aborted";

/** A chain operation that did not complete: timed out, no endpoint, connection lost, closed or aborted. */
export class ChainError extends Error {
  override readonly name = "ChainError";
  readonly kind: ChainErrorKind;

  constructor(kind: ChainErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/** Per-call options: a tighter or looser bound, retries, and the caller's cancellation. */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Times `fn` runs again, on the next connection, when the connection is lost under it
   * (default 1; never after a timeout). Pass 0 for anything that must not run twice.
   */
  retries?: number;
}

/** A subtensor JSON-RPC client with failover, bounded calls and half-open detection. */
export interface ChainClient {
  /**
   * Runs `fn` on the live connection, bounded by the call timeout. A call past its timeout drops
   * the connection (it may be half-open) and the next endpoint takes over; it is not retried.
   * A call whose connection is lost under it runs once more on the next one (`retries`).
   */
  call<T>(
    what: string,
    fn: (api: ApiPromise, connection: ChainConnection) => Promise<T>,
    options?: CallOptions,
  ): Promise<T>;
  /** The live connection, waiting (bounded) for one. */
  connection(options?: CallOptions): Promise<ChainConnection>;
  /** The newest finalized block, read now. */
  finalized(options?: CallOptions): Promise<BlockRef>;
  /** The api decorated at `hash` (storage reads as of that block). Tied to the current connection. */
  at(hash: string, options?: CallOptions): Promise<ApiDecoration<"promise">>;
  /** The newest best head seen on the subscription, if any. */
  head(): BlockRef | undefined;
  /** Resolves once a head numbered `number` or higher is seen; bounded by the blocks to wait. */
  waitForHead(number: number, options?: CallOptions): Promise<BlockRef>;
  /** Calls `listener` with every new best head; returns the unsubscribe. */
  onHead(listener: (head: BlockRef) => void): () => void;
  /** Drops the current connection (logged with `reason`) and moves to the next endpoint. */
  reconnect(reason: string): void;
  /** The chain's genesis hash, once an endpoint has been reached. */
  readonly genesisHash: string | undefined;
  readonly blockTimeMs: number;
  readonly callTimeoutMs: number;
  status(): ChainClientStatus;
  /** Drops the connection and stops every timer; later calls fail with `closed`. */
  close(): Promise<void>;
}

interface Live extends ChainConnection {
  index: number;
  controller: AbortController;
  lastHeadAt: number;
  unsubHeads: (() => void) | undefined;
}

/** A URL safe to log: scheme, host and path (credentials hide in userinfo and queries). */
export function describeEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
}

const noop = () => {};

/**
 * Rejects with `onTimeout()` after `ms`, with a {@link ChainError} "aborted" when `signal` fires,
 * and with `lost`'s reason when that fires; otherwise settles as `promise` does. A late rejection
 * of `promise` is swallowed.
 */
function bounded<T>(
  promise: Promise<T>,
  ms: number,
  onTimeout: () => Error,
  signals: { signal?: AbortSignal | undefined; lost?: AbortSignal | undefined } = {},
): Promise<T> {
  promise.catch(noop);
  return new Promise<T>((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      signals.signal?.removeEventListener("abort", onAbort);
      signals.lost?.removeEventListener("abort", onLost);
    };
    const onAbort = () => {
      cleanup();
      reject(new ChainError("aborted", "aborted", { cause: signals.signal?.reason }));
    };
    const onLost = () => {
      cleanup();
      const reason = signals.lost?.reason;
      reject(
        reason instanceof ChainError
          ? reason
          : new ChainError("connection_lost", "the connection was dropped"),
      );
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(onTimeout());
    }, ms);
    if (signals.signal?.aborted) return onAbort();
    if (signals.lost?.aborted) return onLost();
    signals.signal?.addEventListener("abort", onAbort, { once: true });
    signals.lost?.addEventListener("abort", onLost, { once: true });
    promise.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error) => {
        cleanup();
        reject(error);
      },
    );
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A subtensor client over `@polkadot/api`, built for a validator that must never hang:
 * - endpoints are tried in order; a dropped connection moves to the next one (round robin) and
 *   the reason is logged. Providers are created without polkadot's auto-reconnect, which retries
 *   the same URL forever behind the caller's back.
 * - every call is bounded (`callTimeoutMs`); a call past its bound drops the connection, because
 *   on a half-open socket nothing else would ever fail.
 * - a watchdog drops the connection when no new head arrives for `staleHeadBlocks` block times.
 * - reads are pinned: `finalized()` then `at(hash)` (or `call` with `api.at`).
 * Creating the client does not wait: the first connection is made in the background, and calls
 * wait for it within their own bound.
 * @example
 * const client = createChainClient({ endpoints: ["wss://a.example", "wss://b.example"] });
 * const { hash } = await client.finalized();
 */
export function createChainClient(options: ChainClientOptions): ChainClient {
  const endpoints = [...options.endpoints];
  if (endpoints.length === 0) throw new Error("createChainClient: at least one endpoint is needed");
  for (const url of endpoints) {
    if (!/^wss?:\/\//i.test(url)) {
      throw new Error(`chain endpoint ${describeEndpoint(url)} must be a ws:// or wss:// URL`);
    }
  }
  const callTimeoutMs = positive(options.callTimeoutMs ?? 10_000, "callTimeoutMs");
  const connectTimeoutMs = positive(
    options.connectTimeoutMs ?? Math.max(15_000, 2 * callTimeoutMs),
    "connectTimeoutMs",
  );
  const blockTimeMs = positive(options.blockTimeMs ?? 12_000, "blockTimeMs");
  const staleHeadBlocks = positive(options.staleHeadBlocks ?? 3, "staleHeadBlocks");
  const staleMs = staleHeadBlocks * blockTimeMs;
  const log = options.log ?? createLogger({ name: "chain-client" });
  // @polkadot writes plain-text console lines of its own (RPC-CORE, API-WS, ...); ours are JSON.
  routePolkadotConsole();

  let expectedGenesis = options.genesisHash?.toLowerCase();
  let index = 0;
  let live: Live | undefined;
  let connecting: Promise<Live> | undefined;
  let reconnects = 0;
  let lastError: string | null = null;
  let lastHead: (BlockRef & { seenAt: number }) | undefined;
  let trying: string | null = null;
  let closed = false;
  const closing = new AbortController();
  const headListeners = new Set<(head: BlockRef) => void>();
  // Metadata keyed as polkadot's `metadata` option expects, so a reconnect skips the download.
  const metadataCache: Record<string, `0x${string}`> = {};

  const drop = (target: Live, reason: string) => {
    if (live !== target) return;
    live = undefined;
    reconnects += 1;
    lastError = reason;
    index = (target.index + 1) % endpoints.length;
    target.controller.abort(new ChainError("connection_lost", reason));
    log.warn("chain connection dropped; moving to the next endpoint", {
      endpoint: target.endpoint,
      next: describeEndpoint(endpoints[index] as string),
      reason,
    });
    shut(target);
    if (!closed) ensureConnecting();
  };

  const shut = (target: { api?: ApiPromise; provider: WsProvider; unsubHeads?: () => void }) => {
    try {
      target.unsubHeads?.();
    } catch {
      // The subscription died with the socket.
    }
    (target.api ? target.api.disconnect() : target.provider.disconnect()).catch(noop);
  };

  const onHeader = (target: Live, header: Header) => {
    if (live !== target) return;
    const head = { number: header.number.toNumber(), hash: header.hash.toHex() };
    target.lastHeadAt = Date.now();
    lastHead = { ...head, seenAt: target.lastHeadAt };
    for (const listener of headListeners) {
      try {
        listener(head);
      } catch (error) {
        log.error("chain head listener failed", { error });
      }
    }
  };

  // One connection attempt to endpoint `i`, every step bounded.
  const open = async (i: number): Promise<Live> => {
    const url = endpoints[i] as string;
    const endpoint = describeEndpoint(url);
    trying = endpoint;
    const provider = new WsProvider(url, false, {}, Math.max(callTimeoutMs, connectTimeoutMs));
    let api: ApiPromise | undefined;
    const timedOut = (step: string) => () =>
      new ChainError("timeout", `${step} took longer than ${connectTimeoutMs} ms`);
    try {
      const up = new Promise<void>((resolve, reject) => {
        const offs = [
          provider.on("connected", () => {
            for (const off of offs) off();
            resolve();
          }),
          provider.on("error", (error: unknown) => {
            for (const off of offs) off();
            reject(new ChainError("unavailable", `cannot connect (${message(error)})`));
          }),
          provider.on("disconnected", () => {
            for (const off of offs) off();
            reject(new ChainError("unavailable", "the endpoint closed the connection"));
          }),
        ];
      });
      await provider.connect();
      await bounded(up, connectTimeoutMs, timedOut("opening the websocket"), {
        signal: closing.signal,
      });
      // polkadot's readiness never settles if the socket closes while the runtime loads.
      const gone = new AbortController();
      const offGone = provider.on("disconnected", () =>
        gone.abort(new ChainError("unavailable", "the endpoint closed the connection")),
      );
      api = new ApiPromise({ provider, noInitWarn: true, metadata: metadataCache });
      try {
        await bounded(api.isReadyOrError, connectTimeoutMs, timedOut("loading the runtime"), {
          signal: closing.signal,
          lost: gone.signal,
        });
      } finally {
        offGone();
      }
      const genesis = api.genesisHash.toHex();
      if (expectedGenesis && genesis !== expectedGenesis) {
        throw new ChainError(
          "unavailable",
          `serves another chain (genesis ${genesis}, expected ${expectedGenesis})`,
        );
      }
      expectedGenesis = genesis;
      const key = `${genesis}-${api.runtimeVersion.specVersion.toString()}`;
      metadataCache[key] ??= api.runtimeMetadata.toHex();
      const controller = new AbortController();
      const target: Live = {
        api,
        provider,
        endpoint,
        index: i,
        controller,
        lost: controller.signal,
        lastHeadAt: Date.now(),
        unsubHeads: undefined,
      };
      // Set before the subscription: its first head arrives as soon as it is answered.
      live = target;
      const subscribed = api.rpc.chain.subscribeNewHeads((header) => onHeader(target, header));
      try {
        target.unsubHeads = await bounded(
          subscribed,
          connectTimeoutMs,
          timedOut("subscribing to new heads"),
          { signal: closing.signal },
        );
      } catch (error) {
        live = undefined;
        throw error;
      }
      provider.on("disconnected", () => drop(target, "the endpoint closed the connection"));
      if (closed) {
        live = undefined;
        throw new ChainError("closed", "the chain client is closed");
      }
      if (!provider.isConnected) {
        drop(target, "the endpoint closed the connection");
        throw new ChainError("connection_lost", "the endpoint closed the connection");
      }
      log.info("chain connected", { endpoint, genesisHash: genesis });
      return target;
    } catch (error) {
      if (api && closed) {
        // Closed while the runtime loads: polkadot prints a FATAL with a stack when its socket
        // goes in the middle of initialisation. Let initialisation end (bounded), then disconnect.
        await bounded(api.isReadyOrError, 2_000, () => new Error("init")).catch(noop);
      }
      shut(api ? { api, provider } : { provider });
      throw error;
    } finally {
      trying = null;
    }
  };

  // Tries every endpoint in turn, from the current one, pausing between rounds, until one answers
  // or the client closes. Callers bound their own wait for it.
  const connectLoop = async (): Promise<Live> => {
    for (let round = 0; ; round++) {
      for (let n = 0; n < endpoints.length; n++) {
        if (closed) throw new ChainError("closed", "the chain client is closed");
        const i = index;
        try {
          return await open(i);
        } catch (error) {
          if (closed) throw new ChainError("closed", "the chain client is closed");
          lastError = `${describeEndpoint(endpoints[i] as string)}: ${message(error)}`;
          log.warn("chain endpoint unusable; trying the next one", {
            endpoint: describeEndpoint(endpoints[i] as string),
            reason: message(error),
          });
          index = (i + 1) % endpoints.length;
        }
      }
      await sleep(Math.min(250 * 2 ** round, blockTimeMs, 5_000), closing.signal);
    }
  };

  const ensureConnecting = (): Promise<Live> => {
    if (!connecting) {
      const attempt = connectLoop();
      connecting = attempt;
      attempt.then(
        () => {
          if (connecting === attempt) connecting = undefined;
        },
        () => {
          if (connecting === attempt) connecting = undefined;
        },
      );
    }
    return connecting;
  };

  const tick = Math.max(25, Math.min(1_000, Math.floor(blockTimeMs / 2)));
  let lastTick = Date.now();
  const watchdog = setInterval(() => {
    const now = Date.now();
    // A tick far later than scheduled means this process was busy (a long synchronous task,
    // a suspended VM), not that the endpoint went quiet: heads may be sitting unread in the
    // socket. Give the connection a fresh window instead of blaming it.
    const busyHere = now - lastTick > tick + staleMs / 2;
    lastTick = now;
    if (!live) return;
    if (busyHere) {
      live.lastHeadAt = now;
      return;
    }
    if (now - live.lastHeadAt > staleMs) {
      drop(live, `no new head for ${now - live.lastHeadAt} ms (${staleHeadBlocks} block times)`);
    }
  }, tick);
  watchdog.unref();

  const connection = async (opts: CallOptions = {}): Promise<Live> => {
    if (closed) throw new ChainError("closed", "the chain client is closed");
    if (live) return live;
    const timeout = opts.timeoutMs ?? connectTimeoutMs;
    return bounded(
      ensureConnecting(),
      timeout,
      () =>
        new ChainError(
          "unavailable",
          `no chain endpoint answered within ${timeout} ms${lastError ? ` (last error: ${lastError})` : ""}`,
        ),
      { signal: opts.signal },
    );
  };

  const call = async <T>(
    what: string,
    fn: (api: ApiPromise, connection: ChainConnection) => Promise<T>,
    opts: CallOptions = {},
  ): Promise<T> => {
    const timeout = opts.timeoutMs ?? callTimeoutMs;
    const retries = opts.retries ?? 1;
    for (let attempt = 0; ; attempt++) {
      const target = await connection({ signal: opts.signal });
      let promise: Promise<T>;
      try {
        promise = fn(target.api, target);
      } catch (error) {
        promise = Promise.reject(error);
      }
      try {
        return await bounded(
          promise,
          timeout,
          () => {
            const reason = `${what} timed out after ${timeout} ms`;
            drop(target, reason);
            return new ChainError("timeout", reason);
          },
          { signal: opts.signal, lost: target.lost },
        );
      } catch (error) {
        // polkadot rejects pending requests before it reports the socket closed: a failure on
        // a socket that is gone is a lost connection, whatever its message says.
        const lost =
          (error instanceof ChainError && error.kind === "connection_lost") ||
          (!(error instanceof ChainError) && !target.provider.isConnected);
        if (!lost) throw error;
        drop(target, "the endpoint closed the connection");
        if (attempt >= retries || closed) {
          throw error instanceof ChainError
            ? error
            : new ChainError("connection_lost", `${what}: the connection was lost`, {
                cause: error,
              });
        }
        log.info("retrying on the next connection", { what });
      }
    }
  };

  const onHead = (listener: (head: BlockRef) => void) => {
    headListeners.add(listener);
    return () => {
      headListeners.delete(listener);
    };
  };

  ensureConnecting().catch(noop);

  return {
    call,
    connection,
    finalized: (opts) =>
      call(
        "reading the finalized head",
        async (api) => {
          const hash = await api.rpc.chain.getFinalizedHead();
          const header = await api.rpc.chain.getHeader(hash);
          return { number: header.number.toNumber(), hash: hash.toHex() };
        },
        opts,
      ),
    at: (hash, opts) => call(`opening block ${hash}`, (api) => api.at(hash), opts),
    head: () => (lastHead ? { number: lastHead.number, hash: lastHead.hash } : undefined),
    waitForHead(number, opts = {}) {
      if (closed) return Promise.reject(new ChainError("closed", "the chain client is closed"));
      if (lastHead && lastHead.number >= number) {
        return Promise.resolve({ number: lastHead.number, hash: lastHead.hash });
      }
      const blocks = Math.max(1, number - (lastHead?.number ?? number - 1));
      // Twice the expected wait, plus the time a dead connection takes to be noticed and replaced.
      const timeout = opts.timeoutMs ?? 2 * blocks * blockTimeMs + staleMs + connectTimeoutMs;
      let off = noop;
      const reached = new Promise<BlockRef>((resolve) => {
        off = onHead((head) => {
          if (head.number >= number) resolve(head);
        });
      });
      if (!live) ensureConnecting().catch(noop);
      return bounded(
        reached,
        timeout,
        () =>
          new ChainError(
            "timeout",
            `block ${number} was not seen within ${timeout} ms (last head ${lastHead?.number ?? "none"})`,
          ),
        { signal: opts.signal ?? closing.signal },
      ).finally(off);
    },
    onHead,
    reconnect(reason) {
      if (live) drop(live, reason);
    },
    get genesisHash() {
      return expectedGenesis;
    },
    blockTimeMs,
    callTimeoutMs,
    status: () => ({
      endpoint: live?.endpoint ?? trying,
      connected: live !== undefined,
      genesisHash: expectedGenesis ?? null,
      head: lastHead
        ? {
            number: lastHead.number,
            hash: lastHead.hash,
            seenAt: new Date(lastHead.seenAt).toISOString(),
          }
        : null,
      reconnects,
      lastError,
      closed,
    }),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(watchdog);
      closing.abort(new ChainError("closed", "the chain client is closed"));
      headListeners.clear();
      // A connection being opened shuts itself once it sees `closed`: wait for that (bounded), so
      // nothing of it outlives close() (the endpoint may go right after).
      const opening = connecting;
      if (opening) await bounded(opening, 3_000, () => new Error("connect")).catch(noop);
      const target = live;
      live = undefined;
      if (target) {
        target.controller.abort(new ChainError("closed", "the chain client is closed"));
        try {
          target.unsubHeads?.();
        } catch {
          // Already gone with the socket.
        }
        await bounded(
          target.api.disconnect(),
          1_000,
          () => new Error("disconnect timed out"),
        ).catch(noop);
      }
    },
  };
}

function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`${name} must be a positive number`);
  return value;
}
