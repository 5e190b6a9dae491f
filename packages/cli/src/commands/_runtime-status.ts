import { loadAdminConnection } from "./_admin-config.js";
import { callMaster } from "./_master-client.js";
import { CliError } from "./_shared.js";

/** One challenge as the master's reconciler reports it (GET /v1/admin/reconciler). */
interface RuntimeView {
  slug: string;
  status: string;
  desired: string;
  observed: string;
  image: string;
  pinned_image: string | null;
  last_action: string | null;
  last_action_at: string | null;
  last_error: string | null;
  restarts: number;
  next_attempt_at: string | null;
}

interface ReconcilerStatus {
  lease: {
    holder: string;
    live: boolean;
    last_pass_at: string | null;
    last_error: string | null;
  } | null;
  challenges: RuntimeView[];
}

const time = (iso: string | null) => (iso ? iso.replace("T", " ").slice(0, 19) : "-");

/** Left-aligned columns, two spaces apart. */
function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

async function adminGet<T>(configPath: string | undefined, path: string): Promise<T> {
  const connection = loadAdminConnection(configPath);
  const { status, body } = await callMaster<T>(connection.adminUrl, path, {
    headers: { "x-admin-token": connection.adminToken },
    expect: [200, 404],
  });
  if (status === 404 && path === "/v1/admin/reconciler")
    throw new CliError(
      "the master runs no reconciler (PLATFORM_RECONCILER=false): its challenges start only on `platform challenge restart`",
    );
  if (status === 404) throw new CliError(`not found (404): no challenge "${path.split("/")[4]}"`);
  return body;
}

/** The subnet's runtime: the reconciler's lease and every challenge's state. */
export async function subnetStatus(
  configPath: string | undefined,
): Promise<{ body: ReconcilerStatus; text: () => string }> {
  const body = await adminGet<ReconcilerStatus>(configPath, "/v1/admin/reconciler");
  const text = () => {
    const lease = body.lease;
    const head = !lease?.live
      ? "reconciler: no master holds the lease"
      : `reconciler: held by ${lease.holder}, last pass ${time(lease.last_pass_at)}${lease.last_error ? `\n  error: ${lease.last_error}` : ""}`;
    const rows = [["SLUG", "STATUS", "DESIRED", "OBSERVED", "RESTARTS", "LAST ACTION", "ERROR"]];
    for (const c of body.challenges) {
      const action = c.last_action ? `${c.last_action} ${time(c.last_action_at)}` : "-";
      rows.push([
        c.slug,
        c.status,
        c.desired,
        c.observed,
        String(c.restarts),
        action,
        c.last_error ?? "",
      ]);
    }
    return body.challenges.length ? `${head}\n\n${columns(rows)}` : `${head}\n\nno challenges`;
  };
  return { body, text };
}

/** One challenge's runtime state and its latest runtime events. */
export async function challengeRuntime(
  configPath: string | undefined,
  slug: string,
): Promise<{ body: unknown; text: () => string }> {
  const body = await adminGet<{
    runtime: RuntimeView;
    events: { kind: string; detail: Record<string, unknown>; created_at: string }[];
  }>(configPath, `/v1/admin/challenges/${encodeURIComponent(slug)}/runtime`);
  const text = () => {
    const r = body.runtime;
    const lines = [
      `${r.slug}: ${r.status}, wants ${r.desired}, observed ${r.observed}`,
      `image: ${r.image}${r.pinned_image ? ` (pinned ${r.pinned_image})` : ""}`,
      `restarts: ${r.restarts}; last action: ${r.last_action ?? "-"} ${time(r.last_action_at)}`,
    ];
    if (r.last_error) lines.push(`last error: ${r.last_error}`);
    if (r.next_attempt_at) lines.push(`next attempt after: ${time(r.next_attempt_at)}`);
    for (const e of body.events)
      lines.push(
        `  ${time(e.created_at)} ${e.kind} ${String(e.detail.reason ?? e.detail.error ?? "")}`,
      );
    return lines.join("\n");
  };
  return { body, text };
}
