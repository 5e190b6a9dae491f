import { WEAKENING_FIELDS } from "@platform/core";
import { MAX_ID } from "./container-user.js";
import { SandboxRefusal } from "./sandbox-refusal.js";

function refuse(field: string, message: string): SandboxRefusal {
  return new SandboxRefusal(
    "weakening_refused",
    `${field}: ${message}; the sandbox is never weakened`,
    { field },
  );
}

/**
 * Refuses (`weakening_refused`, naming the field) a request asking for less isolation than the
 * hardened defaults: privileged, a network, a writable root, added capabilities, devices, host
 * mounts, or root. Asking for exactly the default is accepted. Reads core's `BrokerRunRequest`
 * fields from an untyped record, so it also guards JSON that came from elsewhere.
 * @example refuseWeakening({ network: "host" }) // throws: network: tasks have no network …
 */
export function refuseWeakening(request: Record<string, unknown>): void {
  if (request["privileged"] === true)
    throw refuse("privileged", "privileged containers are refused");
  const network = request["network"];
  if (network !== undefined && network !== "none") {
    throw refuse(
      "network",
      `tasks have no network ("none"); ${JSON.stringify(network)} is refused`,
    );
  }
  if (request["read_only"] === false)
    throw refuse("read_only", "the root filesystem is always read-only");
  const nonEmpty = (key: string) =>
    Array.isArray(request[key]) && (request[key] as unknown[]).length > 0;
  if (nonEmpty("cap_add"))
    throw refuse("cap_add", "every capability is dropped and none can be added");
  if (nonEmpty("devices"))
    throw refuse("devices", "host devices are refused (ask for GPUs with `gpus`)");
  for (const field of WEAKENING_FIELDS) {
    if (request[field] !== undefined)
      throw refuse(field, "the hardened container's setting is never overridden");
  }
  if (nonEmpty("host_mounts"))
    throw refuse("host_mounts", "host paths are never mounted; ship inputs as `files`");
  const user = request["user"];
  if (user !== undefined) {
    const match = typeof user === "string" ? /^(\d+)(?::(\d+))?$/.exec(user) : null;
    if (!match)
      throw refuse(
        "user",
        `${JSON.stringify(user)} is not a numeric uid[:gid] (names may resolve to root)`,
      );
    if (Number(match[1]) === 0 || (match[2] !== undefined && Number(match[2]) === 0)) {
      throw refuse("user", "uid or gid 0 (root) is refused");
    }
    // Docker would fail on these at create time (or wrap them): refuse them here, like root.
    if (Number(match[1]) > MAX_ID || (match[2] !== undefined && Number(match[2]) > MAX_ID)) {
      throw refuse("user", `uid and gid must be at most ${MAX_ID}`);
    }
  }
}
