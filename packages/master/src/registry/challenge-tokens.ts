import { createHmac, randomBytes } from "node:crypto";
import { hashToken, tokenHint } from "@platform/core";

/** The two per-challenge credentials. */
export type TokenKind = "challenge" | "broker";

const PREFIX: Record<TokenKind, string> = { challenge: "ct_", broker: "bt_" };

/** What the registry stores of one token: never the value. */
export interface StoredToken {
  salt: string;
  hash: string;
  hint: string;
}

/**
 * Derive a challenge's token from the master key, its purpose, the slug and a random salt.
 * The master can present the challenge token (weights calls, bridge) and hand both tokens to a
 * container it restarts, while the database holds only the salt, a hash and a hint: a stolen
 * database yields no token. Rotation is a new salt.
 */
export function deriveToken(
  masterKey: Buffer,
  kind: TokenKind,
  slug: string,
  salt: string,
): string {
  const mac = createHmac("sha256", masterKey)
    .update(`platform-token-v1\0${kind}\0${slug}\0${salt}`)
    .digest("base64url");
  return `${PREFIX[kind]}${mac}`;
}

/** Mint a new token of `kind` for `slug`: its clear value (show once) and what to store. */
export function mintToken(
  masterKey: Buffer,
  kind: TokenKind,
  slug: string,
): { token: string; stored: StoredToken } {
  const salt = randomBytes(16).toString("base64url");
  const token = deriveToken(masterKey, kind, slug, salt);
  return { token, stored: { salt, hash: hashToken(token), hint: tokenHint(token) } };
}
