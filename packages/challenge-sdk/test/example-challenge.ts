// A small challenge that exercises every part of the SDK: miners sign scores (or the master
// bridges them), the challenge stores them and serves weights from each hotkey's best score.
import { createHash } from "node:crypto";
import { defineChallenge, HttpError, json, Type, weightsFromScores } from "@platform/challenge-sdk";
import { secretsEqual } from "@platform/challenge-sdk/tokens";

/** What a miner submits. */
export const ScoreBody = Type.Object(
  { score: Type.Number(), note: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);

/** How the example's lifecycle hooks report themselves (tests read it). */
export const lifecycle = { setups: 0, closes: 0 };

/** The per-attempt bearer of the custom internal route: "attempt-<id>-secret". */
export const attemptToken = (id: string) => `attempt-${id}-secret`;

export const echoChallenge = defineChallenge({
  slug: "echo-scores",
  name: "Echo scores",
  version: "1.2.3",
  description: "Miners sign a score; weights follow each hotkey's best score.",
  capabilities: ["bridge_submissions"],
  config: Type.Object({
    ECHO_MAX_SCORE: Type.Number({ default: 1000, exclusiveMinimum: 0 }),
    ECHO_RUN_TOKEN: Type.String({ default: "run-token-0123456789" }),
  }),
  migrations: new URL("./fixtures/echo-migrations/", import.meta.url),
  setup: async ({ sql, onClose }) => {
    lifecycle.setups++;
    await sql`insert into echo_events (kind, detail) values ('setup', 'ran')`;
    onClose(() => {
      lifecycle.closes++;
    });
  },
  weights: async ({ sql }) => {
    const rows = await sql<{ hotkey: string; score: number; at: Date; id: string }[]>`
      select hotkey, score, created_at as at, id::text as id from echo_scores`;
    return { epoch: 7, weights: weightsFromScores(rows) };
  },
  routes: (router) => {
    const registered = async (
      hotkey: string,
      ctx: { sql: import("@platform/challenge-sdk").Sql },
    ) => (await ctx.sql`select 1 from echo_banned where hotkey = ${hotkey}`).length === 0;

    router.public({
      method: "GET",
      path: "/v1/scores",
      summary: "Recent scores",
      query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }) }),
      handler: async ({ sql, query }) =>
        sql`select id::int as id, hotkey, score, via from echo_scores order by id desc limit ${query.limit}`,
    });

    router.public({
      method: "GET",
      path: "/v1/scores/:id",
      params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
      handler: async ({ sql, params }) => {
        const [row] = await sql`select id::int as id, hotkey, score, via, request_hash, filename
          from echo_scores where id = ${params.id}`;
        if (!row) throw new HttpError(404, "score_not_found", "No such score");
        return row;
      },
    });

    // One declaration: signed by the miner at /v1/scores, or bridged by the master (a JSON score
    // or a ZIP, scored by its size) at /internal/v1/bridge/submissions; one rate-limit count.
    router.submission({
      path: "/v1/scores",
      summary: "Submit a score, signed or through the master",
      body: ScoreBody,
      raw: ["application/zip"],
      bodyLimit: 2_000_000,
      registered,
      rateLimit: { limit: 3, windowSeconds: 60, bucket: "scores" },
      responses: { 201: { description: "Stored", schema: Type.Object({ id: Type.Integer() }) } },
      handler: async ({ sql, body, rawBody, miner, filename, config }) => {
        const score = body === undefined ? rawBody.byteLength : body.score;
        if (score > config.ECHO_MAX_SCORE) {
          throw new HttpError(
            400,
            "score_too_high",
            `score must be at most ${config.ECHO_MAX_SCORE}`,
          );
        }
        const [row] = await sql<{ id: number }[]>`
          insert into echo_scores (hotkey, score, via, request_hash, filename)
          values (${miner.hotkey}, ${score}, ${miner.via}, ${miner.requestHash}, ${filename})
          returning id::int as id`;
        if (miner.via === "signed") return json({ id: row!.id }, { status: 201 });
        return json(
          { id: row!.id, hotkey: miner.hotkey, nonce: miner.nonce, filename },
          { status: 201 },
        );
      },
    });

    router.signed({
      method: "POST",
      path: "/v1/echo",
      body: "raw",
      contentTypes: ["application/octet-stream"],
      bodyLimit: 64,
      handler: ({ body, rawBody, miner }) => ({
        hotkey: miner.hotkey,
        bytes: body.byteLength,
        same: body === rawBody,
        sha256: createHash("sha256").update(body).digest("hex"),
      }),
    });

    router.signed({
      method: ["GET", "DELETE"],
      path: "/v1/me",
      query: Type.Object({ verbose: Type.Optional(Type.Boolean()) }),
      handler: ({ miner, query, request }) => ({
        miner,
        verbose: query.verbose ?? false,
        method: request.method,
      }),
    });

    router.internal({
      method: "POST",
      path: "/internal/v1/worker/process-next",
      handler: async ({ sql }) => {
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from echo_scores`;
        return { processed: false, pending: row!.n };
      },
    });

    router.internal({
      method: "POST",
      path: "/internal/v1/attempts/:attempt_id/events",
      params: Type.Object({ attempt_id: Type.String({ pattern: "^[0-9]+$" }) }),
      body: Type.Object({ line: Type.String() }),
      bearer: (token, { url }) => token === attemptToken(url.pathname.split("/")[4] ?? ""),
      handler: async ({ sql, params, body }) => {
        await sql`insert into echo_events (kind, detail) values ('attempt', ${`${params.attempt_id}:${body.line}`})`;
        return json({ accepted: 1 }, { status: 202 });
      },
    });

    router.public({
      method: "POST",
      path: "/evaluation/v1/runs/:run_id/result",
      params: Type.Object({ run_id: Type.String() }),
      body: Type.Object({ ok: Type.Boolean() }),
      // The run's own bearer (401 invalid_token without it), not the challenge token.
      bearer: (token, { config }) => secretsEqual(token, config.ECHO_RUN_TOKEN),
      handler: ({ params, body }) => ({ run_id: params.run_id, ok: body.ok }),
    });

    router.public({
      method: "GET",
      path: "/v1/boom",
      handler: () => {
        throw new Error("database password=hunter2 exploded");
      },
    });
  },
});
