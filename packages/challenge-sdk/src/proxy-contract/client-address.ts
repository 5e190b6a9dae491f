/**
 * Who is asking, for a per-client key (a limit, a fair share of something scarce): the address
 * of the client, read only from what a proxy the challenge trusts vouches for.
 *
 * The master's proxy appends the address its socket saw to `X-Forwarded-For` (nginx's
 * `$proxy_add_x_forwarded_for`: whatever the client sent first, then that address; docs/proxy.md).
 * So the last entry is the master's word and everything before it is the client's (or the word
 * of proxies in front of the master). A client that reaches the challenge directly can write any
 * `X-Forwarded-For` it likes, so the header counts only when the connection itself comes from a
 * trusted proxy: then the walk goes right to left, each trusted hop vouching for the entry on
 * its left, and stops at the first address that is not a trusted proxy (Express's
 * `trust proxy` with a list, nginx's `real_ip_recursive`). Without a socket address (a request
 * answered in-process) the key is "local".
 *
 * An IPv6 client is keyed by its /64: one subscriber usually holds a whole /64 and could
 * otherwise take a new address for every request a limit counts.
 */
import { BlockList, isIP } from "node:net";

/** The ranges `TRUSTED_PROXIES` names with `loopback` and `private`. */
const NAMED_RANGES: Record<string, readonly string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  // RFC 1918 and IPv6 unique local addresses: a master beside the challenge on a Docker or
  // private network. Not 100.64.0.0/10: carrier-grade NAT hands those to customers.
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/** `TRUSTED_PROXIES` when it is not set: the master on this host or on a private network. */
export const DEFAULT_TRUSTED_PROXIES = "loopback,private";

/** Entries of `X-Forwarded-For` looked at, from the right (the header is the client's to pad). */
const MAX_FORWARDED_HOPS = 16;

/** Which peers may speak for the client in `X-Forwarded-For`. */
export interface TrustedProxies {
  /** Whether `address` (a plain IPv4 or IPv6 address) is one of them. */
  has(address: string): boolean;
}

/**
 * The trusted proxies of a `TRUSTED_PROXIES` value: comma-separated addresses, CIDR ranges and
 * the names `loopback` and `private`; `none` (or an empty value) trusts nobody. Throws a
 * RangeError naming the first entry that is none of these.
 * @example trustedProxies("loopback, 10.1.0.0/16, 2001:db8::7")
 */
export function trustedProxies(spec: string): TrustedProxies {
  const list = new BlockList();
  for (const raw of spec.split(",")) {
    const entry = raw.trim().toLowerCase();
    if (entry === "" || entry === "none") continue;
    for (const range of NAMED_RANGES[entry] ?? [entry]) addRange(list, range, raw.trim());
  }
  return {
    has: (address) => {
      const family = isIP(address);
      return family !== 0 && list.check(address, family === 6 ? "ipv6" : "ipv4");
    },
  };
}

function addRange(list: BlockList, range: string, entry: string): void {
  const [address = "", prefix, extra] = range.split("/");
  const family = isIP(address);
  const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
  const max = family === 6 ? 128 : 32;
  if (
    family === 0 ||
    extra !== undefined ||
    !(prefix === undefined || /^\d{1,3}$/.test(prefix)) ||
    bits > max
  ) {
    throw new RangeError(
      `${JSON.stringify(entry)} is not an IP address, a CIDR range, "loopback", "private" or "none"`,
    );
  }
  list.addSubnet(address, bits, family === 6 ? "ipv6" : "ipv4");
}

/**
 * The key of the client behind a request: its address as the trusted proxies report it (see the
 * file's comment), an IPv6 one cut to its /64. `remoteAddress` is the socket's address (a
 * handler's `env.remoteAddress`).
 * @example clientKey(request.headers, "10.0.0.2", trustedProxies("private")) // "203.0.113.9"
 */
export function clientKey(
  headers: Headers,
  remoteAddress: string | undefined,
  trusted: TrustedProxies,
): string {
  let client = remoteAddress === undefined ? null : plainAddress(remoteAddress);
  if (client === null) return remoteAddress === undefined ? "local" : "unknown";
  const hops = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .slice(-MAX_FORWARDED_HOPS)
    .reverse();
  for (const hop of hops) {
    if (!trusted.has(client)) break;
    const reported = plainAddress(hop);
    // Not an address: the trusted hop that passed it on is as far as anyone vouches.
    if (reported === null) break;
    client = reported;
  }
  return keyOf(client);
}

/**
 * `text` as a plain address: trimmed, an IPv4-mapped IPv6 address as its IPv4 one, a zone id or
 * brackets (`[::1]`) dropped; null when it is not an IP address (a port, a name, "unknown").
 */
function plainAddress(text: string): string | null {
  let address = text.trim();
  if (address.startsWith("[") && address.endsWith("]")) address = address.slice(1, -1);
  address = address.replace(/%.*$/, "");
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) address = mapped[1]!;
  return isIP(address) === 0 ? null : address.toLowerCase();
}

/** An IPv4 address as it is; an IPv6 one as its /64 (`2001:db8:1:2::/64`). */
function keyOf(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = expandIpv6(address).slice(0, 4);
  return `${groups.map((group) => group.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (valid, per `isIP`), in hex. */
function expandIpv6(address: string): string[] {
  let text = address;
  // A trailing dotted IPv4 part (::1.2.3.4) is two groups.
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill("0");
  return [...left, ...fill, ...right];
}
