import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The cookie that carries a browser's admin session. */
export const ADMIN_SESSION_COOKIE = "platform_admin";

/** How long a browser stays signed in. */
export const ADMIN_SESSION_SECONDS = 8 * 60 * 60;

function mac(key: Buffer, text: string): string {
  return createHmac("sha256", key).update(text).digest("base64url");
}

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Stateless admin sessions: `v2.<expiry>.<id>.<hmac>`, keyed by the master key AND bound to a
 * hash of the current admin token, so rotating the admin token signs every browser out. The id
 * is random, so two sign-ins (even in the same second) are two sessions with two CSRF tokens.
 */
export class AdminSessions {
  private readonly binding: string;

  constructor(
    private readonly key: Buffer,
    adminToken: string,
  ) {
    this.binding = createHash("sha256").update(adminToken).digest("hex");
  }

  /** A new session value, valid for {@link ADMIN_SESSION_SECONDS}. */
  issue(now = Date.now()): string {
    const expiry = Math.floor(now / 1000) + ADMIN_SESSION_SECONDS;
    const id = randomBytes(16).toString("base64url");
    return `v2.${expiry}.${id}.${this.sign(expiry, id)}`;
  }

  private sign(expiry: number, id: string): string {
    return mac(this.key, `admin-session\0${expiry}\0${id}\0${this.binding}`);
  }

  /** True for an unexpired session issued under the current admin token. */
  verify(session: string | undefined, now = Date.now()): boolean {
    const match = session
      ? /^v2\.(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(session)
      : null;
    if (!match) return false;
    const expiry = Number(match[1]);
    if (expiry * 1000 <= now) return false;
    return equal(match[3]!, this.sign(expiry, match[2]!));
  }

  /** The CSRF token forms must echo: derived from the session, so it cannot be guessed or reused across sessions. */
  csrfToken(session: string): string {
    return mac(this.key, `admin-csrf\0${session}`);
  }

  /** Check a form's CSRF token against the session it came with. */
  verifyCsrf(session: string, token: string | undefined): boolean {
    return typeof token === "string" && equal(token, this.csrfToken(session));
  }
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function readCookie(headers: Headers, name: string): string | undefined {
  for (const part of (headers.get("cookie") ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

/** The Set-Cookie value of a session: HttpOnly, SameSite=Strict, scoped to /admin. */
export function sessionCookie(
  value: string,
  secure: boolean,
  maxAge = ADMIN_SESSION_SECONDS,
): string {
  return `${ADMIN_SESSION_COOKIE}=${value}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}
