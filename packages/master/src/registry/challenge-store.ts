import {
  type ChallengeCreate,
  type ChallengeStatus,
  type ChallengeUpdate,
  DEFAULT_REQUIRED_CAPABILITIES,
  HttpError,
  type Sql,
  type TransactionSql,
  tokenMatchesHash,
} from "@platform/core";
import { ActiveChallengeCache } from "./active-challenge-cache.js";
import type { ChallengeRow } from "./challenge-row.js";
import { deriveToken, mintToken, type StoredToken, type TokenKind } from "./challenge-tokens.js";

/** 404 for a slug the registry does not know. */
export function challengeNotFound(slug: string): HttpError {
  return new HttpError(404, "challenge_not_found", `No challenge with slug "${slug}"`);
}

/** Clear tokens handed out at create or rotation, exactly once. */
export interface IssuedChallengeTokens {
  challenge_token?: string;
  docker_broker_token?: string;
}

// Columns a PATCH may set, in the order they are written; json columns go through sql.json.
const JSON_COLUMNS = new Set([
  "required_capabilities",
  "resources",
  "volumes",
  "env",
  "secrets",
  "metadata",
]);

/**
 * The registry in Postgres. Every write that touches more than one row runs in one
 * transaction; every read is one statement.
 */
export class ChallengeStore {
  private readonly active: ActiveChallengeCache;

  constructor(
    private readonly sql: Sql,
    private readonly masterKey: Buffer,
    /** How long the proxy may trust a cached "active" answer (ms); 0 disables the cache. */
    activeCacheMs = 1000,
  ) {
    this.active = new ActiveChallengeCache(activeCacheMs);
  }

  /** Insert a challenge; 409 when the slug exists. Returns the row and both clear tokens. */
  async create(
    input: ChallengeCreate,
  ): Promise<{ row: ChallengeRow; tokens: Required<IssuedChallengeTokens> }> {
    const challenge = mintToken(this.masterKey, "challenge", input.slug);
    const broker = mintToken(this.masterKey, "broker", input.slug);
    const row = await this.sql.begin(async (tx) => {
      const [inserted] = await tx<ChallengeRow[]>`
        insert into challenges (
          slug, name, image, version, emission_percent, status, description, api_version,
          internal_base_url, required_capabilities, resources, volumes, env, secrets, metadata,
          challenge_token_salt, challenge_token_hash, challenge_token_hint,
          broker_token_salt, broker_token_hash, broker_token_hint
        ) values (
          ${input.slug}, ${input.name}, ${input.image}, ${input.version}, ${input.emission_percent ?? 0},
          ${input.status ?? "draft"}, ${input.description ?? null}, ${input.api_version ?? "1.0"},
          ${input.internal_base_url ?? null},
          ${tx.json(input.required_capabilities ?? [...DEFAULT_REQUIRED_CAPABILITIES])},
          ${tx.json(input.resources ?? {})}, ${tx.json(input.volumes ?? {})}, ${tx.json(input.env ?? {})},
          ${tx.json(input.secrets ?? {})}, ${tx.json((input.metadata ?? {}) as Record<string, never>)},
          ${challenge.stored.salt}, ${challenge.stored.hash}, ${challenge.stored.hint},
          ${broker.stored.salt}, ${broker.stored.hash}, ${broker.stored.hint}
        )
        on conflict (slug) do nothing
        returning *`;
      if (!inserted)
        throw new HttpError(
          409,
          "challenge_exists",
          `A challenge with slug "${input.slug}" already exists`,
        );
      await this.recordEvent(tx, input.slug, "created", { status: inserted.status });
      return inserted;
    });
    this.active.invalidate(input.slug);
    return { row, tokens: { challenge_token: challenge.token, docker_broker_token: broker.token } };
  }

  /** The row of `slug`, or null. */
  async find(slug: string): Promise<ChallengeRow | null> {
    const [row] = await this.sql<ChallengeRow[]>`select * from challenges where slug = ${slug}`;
    return row ?? null;
  }

  /** The row of `slug`, or 404. */
  async get(slug: string): Promise<ChallengeRow> {
    const row = await this.find(slug);
    if (!row) throw challengeNotFound(slug);
    return row;
  }

  /** The row of `slug` if it is active: what the proxy and weights collection serve. */
  async findActive(slug: string): Promise<ChallengeRow | null> {
    const [row] = await this.sql<
      ChallengeRow[]
    >`select * from challenges where slug = ${slug} and status = 'active'`;
    return row ?? null;
  }

  /**
   * {@link findActive} through a short-lived cache: for the proxy's hot path, where a second of
   * staleness across replicas is fine. This replica's own writes are seen at once.
   */
  async findActiveCached(slug: string): Promise<ChallengeRow | null> {
    const cached = this.active.get(slug);
    if (cached !== undefined) return cached;
    const row = await this.findActive(slug);
    this.active.set(slug, row);
    return row;
  }

  /**
   * Whether the proxy's cache holds `slug` as active right now, without a query: a metric's
   * label for a request refused before its challenge was looked up.
   */
  cachedActive(slug: string): boolean {
    return Boolean(this.active.get(slug));
  }

  /** Every challenge (optionally only some statuses), by slug. */
  async list(statuses?: readonly ChallengeStatus[]): Promise<ChallengeRow[]> {
    if (statuses) {
      return this.sql<
        ChallengeRow[]
      >`select * from challenges where status in ${this.sql(statuses)} order by slug`;
    }
    return this.sql<ChallengeRow[]>`select * from challenges order by slug`;
  }

  /** Apply a partial update; 404 for an unknown slug. A status change is recorded as an event. */
  async update(slug: string, patch: ChallengeUpdate): Promise<ChallengeRow> {
    const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
    if (entries.length === 0) return this.get(slug);
    const values: Record<string, unknown> = {};
    for (const [column, value] of entries)
      values[column] = JSON_COLUMNS.has(column) ? this.sql.json(value as never) : value;
    const row = await this.sql.begin(async (tx) => {
      const [before] = await tx<
        ChallengeRow[]
      >`select status from challenges where slug = ${slug} for update`;
      if (!before) throw challengeNotFound(slug);
      const [updated] = await tx<ChallengeRow[]>`
        update challenges set ${tx(values as Record<string, never>)}, updated_at = now()
        where slug = ${slug} returning *`;
      await this.recordEvent(tx, slug, "updated", { fields: entries.map(([column]) => column) });
      if (patch.status && patch.status !== before.status) {
        await this.recordEvent(tx, slug, "status", { from: before.status, to: patch.status });
      }
      return updated!;
    });
    this.active.invalidate(slug);
    return row;
  }

  /** Move a challenge to `status` (with an optional reason, kept for disabled); 404 if unknown. */
  async setStatus(
    slug: string,
    status: ChallengeStatus,
    reason: string | null = null,
  ): Promise<ChallengeRow> {
    const row = await this.sql.begin(async (tx) => {
      const [before] = await tx<
        ChallengeRow[]
      >`select status from challenges where slug = ${slug} for update`;
      if (!before) throw challengeNotFound(slug);
      const [updated] = await tx<ChallengeRow[]>`
        update challenges set status = ${status}, status_reason = ${reason}, updated_at = now()
        where slug = ${slug} returning *`;
      await this.recordEvent(tx, slug, "status", { from: before.status, to: status, reason });
      return updated!;
    });
    this.active.invalidate(slug);
    return row;
  }

  /** Replace one or both tokens; the old ones stop working at once. Returns the new clear values. */
  async rotateTokens(
    slug: string,
    kinds: readonly TokenKind[],
  ): Promise<{ row: ChallengeRow; tokens: IssuedChallengeTokens }> {
    const minted = new Map<TokenKind, { token: string; stored: StoredToken }>();
    for (const kind of kinds) minted.set(kind, mintToken(this.masterKey, kind, slug));
    const challenge = minted.get("challenge")?.stored;
    const broker = minted.get("broker")?.stored;
    const row = await this.sql.begin(async (tx) => {
      const [updated] = await tx<ChallengeRow[]>`
        update challenges set
          challenge_token_salt = coalesce(${challenge?.salt ?? null}, challenge_token_salt),
          challenge_token_hash = coalesce(${challenge?.hash ?? null}, challenge_token_hash),
          challenge_token_hint = coalesce(${challenge?.hint ?? null}, challenge_token_hint),
          broker_token_salt = coalesce(${broker?.salt ?? null}, broker_token_salt),
          broker_token_hash = coalesce(${broker?.hash ?? null}, broker_token_hash),
          broker_token_hint = coalesce(${broker?.hint ?? null}, broker_token_hint),
          updated_at = now()
        where slug = ${slug} returning *`;
      if (!updated) throw challengeNotFound(slug);
      await this.recordEvent(tx, slug, "tokens_rotated", { tokens: kinds });
      return updated;
    });
    this.active.invalidate(slug);
    const tokens: IssuedChallengeTokens = {};
    if (minted.has("challenge")) tokens.challenge_token = minted.get("challenge")!.token;
    if (minted.has("broker")) tokens.docker_broker_token = minted.get("broker")!.token;
    return { row, tokens };
  }

  /** The challenge token the master presents to `row`'s service (weights, bridge). */
  challengeToken(row: ChallengeRow): string {
    return deriveToken(this.masterKey, "challenge", row.slug, row.challenge_token_salt);
  }

  /** The broker token the master hands to `row`'s container when it (re)starts it. */
  brokerToken(row: ChallengeRow): string {
    return deriveToken(this.masterKey, "broker", row.slug, row.broker_token_salt);
  }

  /** Does `token` match the stored broker token of `row`? Constant time. */
  brokerTokenMatches(row: ChallengeRow, token: string): boolean {
    return tokenMatchesHash(token, row.broker_token_hash);
  }

  /** Does `token` match the stored challenge token of `row`? Constant time. */
  challengeTokenMatches(row: ChallengeRow, token: string): boolean {
    return tokenMatchesHash(token, row.challenge_token_hash);
  }

  /** The most recent lifecycle events of a challenge, newest first. */
  async events(
    slug: string,
    limit = 50,
  ): Promise<{ kind: string; detail: unknown; created_at: Date }[]> {
    return this
      .sql`select kind, detail, created_at from challenge_events where slug = ${slug} order by id desc limit ${limit}`;
  }

  private async recordEvent(
    tx: TransactionSql,
    slug: string,
    kind: string,
    detail: Record<string, unknown>,
  ): Promise<void> {
    await tx`insert into challenge_events (slug, kind, detail) values (${slug}, ${kind}, ${tx.json(detail as never)})`;
  }
}
