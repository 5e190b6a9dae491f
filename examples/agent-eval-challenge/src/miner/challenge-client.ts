/**
 * The miner's side of the agent-eval interface: where the challenge is (its own URL, or a
 * master's `/challenges/agent-eval`), and requests signed with the miner's hotkey (the SDK's
 * worker client signs each one). Refusals become a `MinerError` with the challenge's stable
 * code and message, so every step can say plainly what went wrong. Nothing signed is sent
 * twice: a submission that got no answer may have been stored.
 */
import { createWorkerClient, WorkerClientError } from "@platform/challenge-sdk/client";
import type { Sr25519Keypair } from "@platform/challenge-sdk/signing";

export const CHALLENGE_SLUG = "agent-eval";

export class MinerError extends Error {
  override readonly name = "MinerError";
  constructor(
    message: string,
    readonly code: string | null = null,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export interface ChallengeClient {
  /** The challenge's base URL (no trailing slash). */
  base: string;
  /** The master's base URL when the challenge is reached through one. */
  master: string | null;
  /**
   * Where the challenge's /internal routes answer (the proxy never forwards them): the base
   * itself when it is the challenge, else the master registry's `internal_base_url`.
   */
  internal: string | null;
  /** A signed request; resolves to the JSON answer, or throws a MinerError. */
  signed<T>(method: "GET" | "POST" | "PUT", path: string, body?: unknown): Promise<T>;
  /** An unsigned GET of a JSON answer (null on 404). */
  get<T>(url: string): Promise<T | null>;
}

const SIGNED_TIMEOUT_MS = 120_000;
const trimmed = (url: string) => url.replace(/\/+$/, "");

async function json(url: string): Promise<unknown> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/** Whether a challenge answers its own /health at `url` as agent-eval (a direct address). */
async function isChallenge(url: string): Promise<boolean> {
  return ((await json(`${url}/health`)) as { slug?: unknown } | null)?.slug === CHALLENGE_SLUG;
}

/**
 * The master at `url`'s registry entry of agent-eval when it is active (the proxy blocks the
 * challenge's own /health), else null.
 */
async function registryEntry(url: string): Promise<{ internal_base_url?: unknown } | null> {
  const registry = (await json(`${url}/v1/registry`)) as {
    challenges?: { slug?: unknown; status?: unknown; internal_base_url?: unknown }[];
  } | null;
  return (
    (registry?.challenges ?? []).find(
      (entry) => entry.slug === CHALLENGE_SLUG && entry.status === "active",
    ) ?? null
  );
}

/**
 * The challenge behind `url`: the agent-eval challenge itself, or a master proxying it (given as
 * the master's URL or as `<master>/challenges/agent-eval`).
 */
export async function connect(url: string, pair: Sr25519Keypair): Promise<ChallengeClient> {
  const given = trimmed(url);
  const proxied = `/challenges/${CHALLENGE_SLUG}`;
  const master = given.endsWith(proxied) ? given.slice(0, -proxied.length) : given;
  let base: string;
  let viaMaster: string | null = null;
  let internal: string | null = null;
  const entry = await registryEntry(master);
  if (entry !== null) {
    base = `${master}${proxied}`;
    viaMaster = master;
    if (typeof entry.internal_base_url === "string") internal = trimmed(entry.internal_base_url);
  } else if (await isChallenge(given)) {
    base = given;
    internal = given;
  } else {
    throw new MinerError(
      `neither a master proxying agent-eval nor the challenge itself answers at ${given}: is it running? (npm start)`,
    );
  }
  const challenge = createWorkerClient({
    baseUrl: base,
    auth: { signer: pair, slug: CHALLENGE_SLUG },
    // An agent ZIP is uploaded within the attempt: room for a slow link.
    timeoutMs: SIGNED_TIMEOUT_MS,
  });
  return {
    base,
    master: viaMaster,
    internal,
    signed: <T>(method: "GET" | "POST" | "PUT", path: string, body?: unknown) =>
      asMinerError(() =>
        challenge.sendJson<T>(method, path, body === undefined ? {} : { json: body }),
      ),
    async get<T>(target: string) {
      const url = new URL(target);
      const answer = await asMinerError(() =>
        createWorkerClient({ baseUrl: url.origin }).send<T>("GET", url.pathname + url.search),
      );
      if (answer.status === 404) return null;
      if (!answer.ok) {
        throw new MinerError(
          `GET ${target} answered ${answer.status}${answer.code ? ` ${answer.code}` : ""}: ${answer.detail}`,
          answer.code,
          answer.status,
        );
      }
      return answer.body as T;
    },
  };
}

/** The worker client's errors (a refusal, no answer) as the miner's own. */
async function asMinerError<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (!(error instanceof WorkerClientError)) throw error;
    throw new MinerError(error.message, error.code, error.status);
  }
}
