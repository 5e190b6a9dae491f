import { SandboxRefusal } from "./sandbox-refusal.js";

/**
 * The labels that say who owns a container (and its helper objects), defined once for the
 * SDK's docker runner, the master's broker and the master's challenge runtime. Reapers and
 * cleanups select by them and check them again before removing anything, so a task can never
 * set one (`refuseReservedLabels`).
 */
export const PLATFORM_LABELS = {
  /** "true" on everything a task runner created; never on a challenge's own container. */
  managed: "platform.managed",
  /** The challenge's slug (broker workloads, challenge containers). */
  challenge: "platform.challenge",
  /** The task's job id. */
  job: "platform.job",
  /** Which runner made it (the SDK's docker runner: "sdk-docker"), so a reaper only takes its own. */
  runner: "platform.runner",
  /** Unix seconds after which the task is overdue and may be reaped. */
  deadline: "platform.deadline",
  /** The master deployment's id: two deployments on one engine never touch each other's. */
  master: "platform.master",
  /** GPUs the workload holds. */
  gpus: "platform.gpus",
  /** What the object is to its task: {@link TaskObjectRole}. */
  role: "platform.role",
  /** "challenge" on a challenge's own service container, "network" on the network it joins. */
  runtime: "platform.runtime",
} as const;

/** The `platform.role` of a task's objects: the container itself, or one of its helpers. */
export type TaskObjectRole = "run" | "staging" | "files" | "network";

/** Who owns a task: what its ownership labels say. Unset fields are not labelled. */
export interface TaskOwner {
  job: string;
  /** Unix seconds. */
  deadline: number;
  runner?: string;
  challenge?: string;
  master?: string;
  gpus?: number;
}

/**
 * The ownership labels of a task's object: `platform.managed=true`, the owner's fields and the
 * role. Spread them over the task's own labels, never under.
 * @example { ...task.labels, ...ownershipLabels({ job, deadline, runner: "sdk-docker" }, "files") }
 */
export function ownershipLabels(
  owner: TaskOwner,
  role: TaskObjectRole = "run",
): Record<string, string> {
  const labels: Record<string, string> = { [PLATFORM_LABELS.managed]: "true" };
  if (owner.challenge !== undefined) labels[PLATFORM_LABELS.challenge] = owner.challenge;
  labels[PLATFORM_LABELS.job] = owner.job;
  if (owner.runner !== undefined) labels[PLATFORM_LABELS.runner] = owner.runner;
  labels[PLATFORM_LABELS.deadline] = String(owner.deadline);
  if (owner.master !== undefined) labels[PLATFORM_LABELS.master] = owner.master;
  if (owner.gpus !== undefined) labels[PLATFORM_LABELS.gpus] = String(owner.gpus);
  labels[PLATFORM_LABELS.role] = role;
  return labels;
}

/**
 * Docker `label` filters (`platform.x=value`) for the given platform labels; undefined values
 * are left out.
 * @example docker.listContainers({ all: true, filters: { label: labelFilters({ managed: "true", runner: "sdk-docker" }) } })
 */
export function labelFilters(
  values: Partial<Record<keyof typeof PLATFORM_LABELS, string | undefined>>,
): string[] {
  return Object.entries(values)
    .filter((entry): entry is [keyof typeof PLATFORM_LABELS, string] => entry[1] !== undefined)
    .map(([key, value]) => `${PLATFORM_LABELS[key]}=${value}`);
}

/** The `platform.deadline` of an object's labels, or null when it has none that is a number. */
export function deadlineOf(labels: Record<string, string> | undefined): number | null {
  const raw = labels?.[PLATFORM_LABELS.deadline];
  const deadline = raw === undefined || raw === "" ? Number.NaN : Number(raw);
  return Number.isFinite(deadline) ? deadline : null;
}

/** Refuses (`invalid_label`) task labels in the `platform.` namespace: those say who owns a container. */
export function refuseReservedLabels(labels: Record<string, string> | undefined): void {
  for (const key of Object.keys(labels ?? {})) {
    if (key === "platform" || key.startsWith("platform.")) {
      throw new SandboxRefusal(
        "invalid_label",
        `labels.${key}: the "platform." namespace is reserved for runners`,
        { field: `labels.${key}` },
      );
    }
  }
}
