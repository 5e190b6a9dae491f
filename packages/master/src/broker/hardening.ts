import {
  checkTaskLabels,
  type ResolvedTaskLimits,
  refuseWeakening as refuseTaskWeakening,
  resolveTaskLimits,
  resolveTaskUser,
  TaskRejectedError,
} from "@platform/challenge-sdk";
import { type BrokerRunRequest, HttpError } from "@platform/core";
import type { BrokerConfig } from "../config.js";

/**
 * The hardened-container rules are the SDK's (one implementation for the broker and the SDK's
 * docker runner); this file only turns their refusals into the broker's 400 answers and adds
 * the broker's own rule, the image allow-list.
 */

/**
 * Run an SDK check, answering its refusal as 400 with the same code and message and its
 * details (`field`, `maximum`, `index`) as extra body fields.
 */
export function asBrokerRefusal<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof TaskRejectedError)) throw error;
    throw new HttpError(400, error.code, error.message, {
      extra: { ...error.details },
      cause: error,
    });
  }
}

/**
 * Refuse (400 `weakening_refused`, naming the field) a request that asks for less isolation
 * than the hardened defaults: privileged, a network, a writable root, added capabilities,
 * devices, host mounts, or root. Asking for exactly the default is accepted.
 */
export function refuseWeakening(request: BrokerRunRequest): void {
  asBrokerRefusal(() => refuseTaskWeakening(request));
}

/**
 * The user a workload runs as: the request's (already checked non-root), else the image's own
 * when it is not root, else nobody (65534).
 */
export function resolveUser(requested: string | undefined, imageUser: string | undefined): string {
  return requested ?? resolveTaskUser(imageUser);
}

/**
 * The limits of one workload against the configured maxima: 400 `limit_exceeded` above any
 * of them (never silently clamped).
 */
export function resolveLimits(
  requested: BrokerRunRequest["limits"],
  config: BrokerConfig,
): ResolvedTaskLimits {
  return asBrokerRefusal(() => resolveTaskLimits(requested, config.limits));
}

/** Refuse labels in the `platform.` namespace (400 `invalid_label`): ownership labels are the broker's alone. */
export function checkLabels(labels: Record<string, string> | undefined): void {
  asBrokerRefusal(() => checkTaskLabels(labels));
}

/** Check an image against the broker's allow-list of prefixes; 400 `image_not_allowed`. */
export function enforceBrokerImage(image: string, prefixes: readonly string[]): void {
  // Docker reads "a/b:1" and "docker.io/a/b:1" alike; the list is matched against what was sent.
  const valid =
    /^[a-z0-9][a-z0-9._/:@-]*$/i.test(image) && !image.includes("..") && !image.includes("//");
  if (!valid || !prefixes.some((prefix) => prefix !== "" && image.startsWith(prefix))) {
    const allowed = prefixes.length
      ? prefixes.join(", ")
      : "none configured (set PLATFORM_BROKER_IMAGES)";
    throw new HttpError(
      400,
      "image_not_allowed",
      `Image "${image}" is not allowed for workloads; allowed prefixes: ${allowed}`,
    );
  }
}
