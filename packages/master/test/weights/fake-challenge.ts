import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the fake answers to the n-th get_weights call (1-based): a reply, or "hang" (never answers). */
export type FakeReply =
  | {
      status?: number;
      json?: unknown;
      body?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  | "hang";

/** A get_weights request the fake received. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** A real node:http challenge that checks the master's credentials like a challenge must. */
export interface FakeChallenge {
  /** Base URL to register as internal_base_url. */
  url: string;
  slug: string;
  /** The bearer it accepts; set it once the master issued the token. */
  token: string;
  requests: SeenRequest[];
  /** get_weights calls that passed the credential check. */
  served: number;
  reply: (call: number) => FakeReply;
  close(): Promise<void>;
}

/**
 * Start a fake challenge on a loopback port. It answers 401 unless the request carries
 * `Authorization: Bearer <token>` and `X-Platform-Challenge-Slug: <slug>`, 404 off the
 * get_weights path, and otherwise what `reply(call)` says (default: the given weights).
 */
export async function startFakeChallenge(options: {
  slug: string;
  token?: string;
  weights?: Record<string, unknown>;
  reply?: (call: number) => FakeReply;
  /** Prefix of every route, to test base URLs with a path. */
  prefix?: string;
}): Promise<FakeChallenge> {
  const prefix = options.prefix ?? "";
  const hanging = new Set<ServerResponse>();
  const fake: FakeChallenge = {
    url: "",
    slug: options.slug,
    token: options.token ?? "ct_fake_token_0123456789",
    requests: [],
    served: 0,
    reply:
      options.reply ??
      (() => ({
        json: {
          challenge_slug: options.slug,
          epoch: 7,
          weights: options.weights ?? { "5Alice": 1 },
        },
      })),
    close: async () => {},
  };
  const server = createServer((req, res) => {
    fake.requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(body);
    };
    if (req.method !== "GET" || req.url !== `${prefix}/internal/v1/get_weights`)
      return send(404, '{"detail":"Not Found"}');
    if (
      req.headers.authorization !== `Bearer ${fake.token}` ||
      req.headers["x-platform-challenge-slug"] !== fake.slug
    ) {
      return send(401, '{"detail":"bad credentials"}');
    }
    fake.served++;
    const reply = fake.reply(fake.served);
    if (reply === "hang") {
      hanging.add(res);
      return;
    }
    const answer = () =>
      send(reply.status ?? 200, reply.body ?? JSON.stringify(reply.json ?? {}), reply.headers);
    if (reply.delayMs) {
      hanging.add(res);
      setTimeout(answer, reply.delayMs).unref();
    } else {
      answer();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
