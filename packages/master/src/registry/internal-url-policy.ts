import { HttpError } from "@platform/core";

/** What an `internal_base_url` may point at. */
export interface InternalUrlPolicy {
  /**
   * Accept link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10, their IPv4-mapped
   * and NAT64 forms, fd00:ec2::254, metadata.google.internal). Off by default: the master calls
   * this URL with the challenge's bearer, and a metadata service would answer it with the
   * host's cloud credentials (PLATFORM_ALLOW_LINK_LOCAL_UPSTREAMS).
   */
  allowLinkLocal: boolean;
}

/** The default: no link-local or metadata address. */
export const DEFAULT_INTERNAL_URL_POLICY: InternalUrlPolicy = { allowLinkLocal: false };

const METADATA_HOSTS = new Set(["metadata.google.internal", "metadata.goog", "metadata"]);

function ipv4LinkLocal(a: number, b: number): boolean {
  return a === 169 && b === 254;
}

// The WHATWG parser has already normalised the host: IPv4 in dotted decimal whatever spelling
// was sent (0xa9fe.0xa9fe, 2852039166), IPv6 compressed, lower case, in brackets.
function linkLocalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (METADATA_HOSTS.has(host)) return true;
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host);
  if (v4) return ipv4LinkLocal(Number(v4[1]), Number(v4[2]));
  if (!host.startsWith("[")) return false;
  const v6 = host.slice(1, -1);
  if (v6 === "fd00:ec2::254") return true;
  // fe80::/10: the first hextet is fe80 through febf.
  const first = Number.parseInt(v6.split(":")[0] || "0", 16);
  if (first >= 0xfe80 && first <= 0xfebf) return true;
  // IPv4-mapped (::ffff:a9fe:a9fe) and NAT64 (64:ff9b::a9fe:a9fe): the IPv4 is the last 32 bits.
  const embedded = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (embedded) {
    const high = Number.parseInt(embedded[1]!, 16);
    return ipv4LinkLocal(high >> 8, high & 0xff);
  }
  return false;
}

/**
 * Refuses (400 `internal_url_refused`) an `internal_base_url` that carries userinfo (it would
 * be a credential in the registry and in every log line), or that names a link-local or cloud
 * metadata address unless the policy allows it. Names are checked as written: a DNS name that
 * resolves to such an address is the operator's to avoid (docs/master.md).
 * @example enforceInternalUrlPolicy("http://169.254.169.254/", DEFAULT_INTERNAL_URL_POLICY) // throws
 */
export function enforceInternalUrlPolicy(url: string, policy: InternalUrlPolicy): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new HttpError(400, "internal_url_refused", "internal_base_url is not a valid URL");
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new HttpError(
      400,
      "internal_url_refused",
      "internal_base_url must not carry credentials (user:password@); the master authenticates with the challenge token",
    );
  }
  if (!policy.allowLinkLocal && linkLocalHost(parsed.hostname)) {
    throw new HttpError(
      400,
      "internal_url_refused",
      "internal_base_url names a link-local or cloud metadata address; set PLATFORM_ALLOW_LINK_LOCAL_UPSTREAMS=true to allow it",
    );
  }
}
