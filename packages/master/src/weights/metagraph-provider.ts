import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { MetagraphError, type MetagraphProvider } from "@platform/chain";
import { type Dispatcher, request } from "undici";

/** The largest uid a subnet can have (uids are u16). */
export const MAX_UID = 65_535;

// The provider contract and its error live with the chain's own provider (@platform/chain); the
// master adds the file, URL and static providers.
export { MetagraphError, type MetagraphProvider };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Read a metagraph document in either accepted shape:
 * `{ "hotkeys": ["5F…", null, "5G…"] }` (index = uid, null for an empty slot), or
 * `{ "5F…": 0, "5G…": 2 }` (hotkey -> uid). A hotkey on two uids, or two hotkeys on one uid, is
 * refused: a metagraph cannot hold either, so the document is stale or corrupt.
 */
export function parseMetagraph(value: unknown): Map<string, number> {
  if (!isRecord(value)) throw new MetagraphError("metagraph must be a JSON object");
  const map = new Map<string, number>();
  if (Array.isArray(value.hotkeys)) {
    const hotkeys: unknown[] = value.hotkeys;
    if (hotkeys.length > MAX_UID + 1)
      throw new MetagraphError(`metagraph lists ${hotkeys.length} uids, more than ${MAX_UID + 1}`);
    hotkeys.forEach((hotkey, uid) => {
      if (hotkey === null || hotkey === "") return;
      if (typeof hotkey !== "string")
        throw new MetagraphError(`hotkeys[${uid}] must be a string or null`);
      if (map.has(hotkey))
        throw new MetagraphError(`hotkey at uid ${uid} is also at uid ${map.get(hotkey)}`);
      map.set(hotkey, uid);
    });
    return map;
  }
  const taken = new Set<number>();
  for (const [hotkey, uid] of Object.entries(value)) {
    if (typeof uid !== "number" || !Number.isInteger(uid) || uid < 0 || uid > MAX_UID) {
      throw new MetagraphError(`uid of a hotkey must be an integer from 0 to ${MAX_UID}`);
    }
    if (taken.has(uid)) throw new MetagraphError(`uid ${uid} is given to more than one hotkey`);
    taken.add(uid);
    map.set(hotkey, uid);
  }
  return map;
}

/** A provider that reads a JSON file on every call, so an operator can replace the file live. */
export function jsonFileMetagraph(path: string): MetagraphProvider {
  return {
    async uids() {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        throw new MetagraphError(
          `cannot read the metagraph file (${(error as NodeJS.ErrnoException).code ?? "error"})`,
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new MetagraphError("the metagraph file is not valid JSON");
      }
      return parseMetagraph(parsed);
    },
  };
}

/** Options of {@link httpMetagraph}. */
export interface HttpMetagraphOptions {
  timeoutMs: number;
  /** Largest document accepted (default 16 MiB: 65,536 hotkeys of 48 chars fit many times). */
  maxBytes?: number;
  dispatcher?: Dispatcher;
}

/**
 * A provider that GETs a JSON document from an http(s) URL on every call. Errors never repeat
 * the URL: it may carry credentials in its userinfo or query.
 */
export function httpMetagraph(url: string, options: HttpMetagraphOptions): MetagraphProvider {
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  return {
    async uids() {
      let text: string;
      try {
        const response = await request(url, {
          method: "GET",
          headers: { accept: "application/json" },
          signal: AbortSignal.timeout(options.timeoutMs),
          ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        });
        if (response.statusCode !== 200) {
          await response.body.dump();
          throw new MetagraphError(`metagraph URL answered HTTP ${response.statusCode}`);
        }
        text = await readCapped(response.body, maxBytes);
      } catch (error) {
        if (error instanceof MetagraphError) throw error;
        const reason =
          (error as Error).name === "TimeoutError"
            ? "timed out"
            : ((error as NodeJS.ErrnoException).code ?? "transport error");
        throw new MetagraphError(`metagraph URL unreachable (${reason})`);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new MetagraphError("the metagraph URL did not return valid JSON");
      }
      return parseMetagraph(parsed);
    },
  };
}

async function readCapped(
  body: AsyncIterable<Uint8Array> & { destroy(): unknown },
  maxBytes: number,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      body.destroy();
      throw new MetagraphError(`metagraph document is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A fixed metagraph, for tests and for operators who pin one: a hotkey -> uid map or record, or
 * a list of hotkeys where index = uid.
 */
export function staticMetagraph(
  source: ReadonlyMap<string, number> | Record<string, number> | readonly (string | null)[],
): MetagraphProvider {
  const map =
    source instanceof Map
      ? new Map(source)
      : parseMetagraph(Array.isArray(source) ? { hotkeys: source } : source);
  return { uids: async () => new Map(map) };
}

/**
 * The provider named by `config.weights.metagraph`: an http(s) URL, or a file path (a `file:`
 * URL works too). Undefined or empty gives null: no uid mapping is possible.
 */
export function metagraphFromConfig(
  value: string | undefined,
  options: HttpMetagraphOptions,
): MetagraphProvider | null {
  if (!value) return null;
  if (/^https?:\/\//i.test(value)) return httpMetagraph(value, options);
  return jsonFileMetagraph(value.startsWith("file:") ? fileURLToPath(value) : value);
}

/** A loggable name for a metagraph source: a URL loses its userinfo and query, which may hold credentials. */
export function describeMetagraphSource(value: string): string {
  if (!/^https?:\/\//i.test(value)) return value;
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
}
