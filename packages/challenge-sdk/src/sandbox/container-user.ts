/** The user a task runs as when its image would run it as root: nobody. */
export const NOBODY = "65534:65534";

const NUMERIC_USER = /^(\d+)(?::(\d+))?$/;

/** Is an image's configured user root? (Empty means root, as Docker reads it.) */
export function isRootUser(user: string | undefined): boolean {
  const [name = "", group] = (user ?? "").trim().split(":");
  const zero = (id: string) => /^0+$/.test(id);
  return name === "" || name === "root" || zero(name) || group === "root" || zero(group ?? "x");
}

/**
 * An explicit numeric `uid:gid` with neither 0, or null. A bare uid gets its own number as its
 * group: Docker would otherwise give it the image's /etc/passwd group, or 0 (root) when the uid
 * has no entry, and `"4242"` ran as gid 0. Names are never kept: the image's /etc/passwd
 * decides what they resolve to, and it may say 0.
 */
function explicitNonRoot(user: string | undefined): string | null {
  const match = NUMERIC_USER.exec((user ?? "").trim());
  if (!match) return null;
  const uid = Number(match[1]);
  const gid = match[2] === undefined ? uid : Number(match[2]);
  if (!Number.isSafeInteger(uid) || !Number.isSafeInteger(gid)) return null;
  if (uid === 0 || gid === 0 || uid > MAX_ID || gid > MAX_ID) return null;
  return `${uid}:${gid}`;
}

/** The largest uid/gid Linux takes (2^32 - 2; 2^32 - 1 is the "no id" marker). */
export const MAX_ID = 4_294_967_294;

/**
 * The user a task runs as, always an explicit numeric `uid:gid` with neither 0: the one it
 * asked for (already checked by `refuseWeakening`), else the image's own when it is numeric and
 * not root, else nobody (65534:65534). A uid alone runs with the group of the same number.
 * @example resolveTaskUser("root") // "65534:65534"; resolveTaskUser("app") // "65534:65534"; resolveTaskUser("0", "4242") // "4242:4242"
 */
export function resolveTaskUser(imageUser: string | undefined, requested?: string): string {
  if (requested !== undefined) {
    const user = explicitNonRoot(requested);
    // refuseWeakening refuses these first; this keeps a caller that skipped it off root.
    if (!user)
      throw new RangeError(`task user ${JSON.stringify(requested)} is not a non-root uid[:gid]`);
    return user;
  }
  return explicitNonRoot(imageUser) ?? NOBODY;
}
