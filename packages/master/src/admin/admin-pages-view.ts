import type { RuntimeStateRow } from "../reconciler/runtime-state-store.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import { html, raw, type SafeHtml } from "./html.js";

const STYLE = raw(`
  :root { color-scheme: light; --ink:#1f2933; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --accent:#4f46e5; }
  * { box-sizing: border-box; }
  body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--ink); background:var(--bg); }
  header { display:flex; align-items:center; gap:24px; padding:14px 32px; background:#111827; color:#fff; }
  header a { color:#c7d2fe; text-decoration:none; } header a:hover { color:#fff; }
  header .brand { font-weight:700; color:#fff; margin-right:auto; }
  main { max-width:1200px; margin:32px auto; padding:0 32px; }
  h1 { font-size:24px; margin:0 0 20px; }
  .cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(180px,1fr)); gap:16px; margin-bottom:28px; }
  .card { background:#fff; border:1px solid var(--line); border-radius:10px; padding:16px 20px; }
  .card .n { font-size:28px; font-weight:700; } .card .l { color:var(--muted); }
  table { width:100%; border-collapse:collapse; background:#fff; border:1px solid var(--line); border-radius:10px; overflow:hidden; }
  th, td { text-align:left; padding:10px 12px; border-bottom:1px solid var(--line); vertical-align:top; }
  th { background:#f1f5f9; font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
  code { font:13px ui-monospace,SFMono-Regular,Menlo,monospace; overflow-wrap:anywhere; }
  .badge { display:inline-block; padding:2px 10px; border-radius:999px; font-size:12px; font-weight:600; }
  .active { background:#dcfce7; color:#166534; } .inactive { background:#fef9c3; color:#854d0e; }
  .disabled { background:#fee2e2; color:#991b1b; } .draft { background:#e2e8f0; color:#334155; }
  .muted { color:var(--muted); font-size:13px; }
  form.inline { display:inline; }
  button { font:inherit; border:1px solid var(--line); background:#fff; border-radius:6px; padding:4px 10px; cursor:pointer; }
  button:hover { border-color:var(--accent); color:var(--accent); }
  .login { max-width:420px; margin:80px auto; background:#fff; border:1px solid var(--line); border-radius:12px; padding:28px; }
  .login input { width:100%; font:inherit; padding:8px 10px; border:1px solid var(--line); border-radius:6px; margin:8px 0 16px; }
  .login button { background:var(--accent); color:#fff; border-color:var(--accent); padding:8px 16px; }
  .error { background:#fee2e2; color:#991b1b; padding:8px 12px; border-radius:6px; margin-bottom:12px; }
  .empty { padding:32px; text-align:center; color:var(--muted); background:#fff; border:1px dashed var(--line); border-radius:10px; }
`);

function page(title: string, body: SafeHtml, signedIn: { csrf: string } | null): string {
  const nav = signedIn
    ? html`<a href="/admin">Overview</a><a href="/admin/challenges">Challenges</a>
        <form class="inline" method="post" action="/admin/logout"><input type="hidden" name="csrf" value="${signedIn.csrf}"><button type="submit">Sign out</button></form>`
    : "";
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · platform master</title><style>${STYLE}</style></head>
<body><header><span class="brand">platform master</span>${nav}</header>
${body}
</body></html>`.value;
}

/** The sign-in form; `error` explains a failed attempt. */
export function loginPage(error: string | null): string {
  return page(
    "Sign in",
    html`<main><form class="login" method="post" action="/admin/login">
      <h1>Sign in</h1>
      ${error ? html`<div class="error" role="alert">${error}</div>` : ""}
      <label for="token">Admin token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
      <button type="submit">Sign in</button>
      <p class="muted">The token the master was started with (ADMIN_TOKEN or ADMIN_TOKEN_FILE).</p>
    </form></main>`,
    null,
  );
}

function badge(status: string): SafeHtml {
  return html`<span class="badge ${status}">${status}</span>`;
}

/** The overview: counts by status and total emission of active challenges. */
export function indexPage(rows: ChallengeRow[], csrf: string): string {
  const count = (status: string) => rows.filter((row) => row.status === status).length;
  const emission = rows
    .filter((row) => row.status === "active")
    .reduce((sum, row) => sum + row.emission_percent, 0);
  const card = (n: unknown, label: string) =>
    html`<div class="card"><div class="n">${n}</div><div class="l">${label}</div></div>`;
  return page(
    "Overview",
    html`<main><h1>Overview</h1>
      <div class="cards">${[
        card(rows.length, "challenges"),
        card(count("active"), "active"),
        card(count("inactive"), "inactive"),
        card(count("disabled"), "disabled"),
        card(count("draft"), "drafts"),
        card(`${Math.round(emission * 100) / 100}%`, "emission of active challenges"),
      ]}</div>
      <p><a href="/admin/challenges">Manage challenges →</a> · <a href="/v1/challenges/dashboard.svg">Dashboard</a> · <a href="/v1/registry">Public registry</a></p>
    </main>`,
    { csrf },
  );
}

function actions(row: ChallengeRow, csrf: string): SafeHtml {
  const button = (action: string, label: string) =>
    html`<form class="inline" method="post" action="/admin/challenges/${encodeURIComponent(row.slug)}/${action}">
      <input type="hidden" name="csrf" value="${csrf}"><button type="submit" data-action="${action}">${label}</button></form>`;
  return html`${row.status !== "active" ? button("activate", "Activate") : ""}
    ${row.status !== "inactive" ? button("deactivate", "Deactivate") : ""}
    ${row.status !== "disabled" ? button("disable", "Disable") : ""}`;
}

const OBSERVED_CLASS: Record<string, string> = {
  running: "active",
  starting: "inactive",
  stopped: "draft",
  unknown: "draft",
};

/** The reconciler's view of one challenge: observed state, restarts, last action and error. */
function runtimeCell(state: RuntimeStateRow | undefined): SafeHtml {
  if (!state) return html`<span class="muted">not seen yet</span>`;
  const last = state.last_action
    ? html`<br><span class="muted">last ${state.last_action} ${state.last_action_at?.toISOString().replace("T", " ").slice(0, 19) ?? ""}</span>`
    : "";
  return html`<span class="badge ${OBSERVED_CLASS[state.observed] ?? "disabled"}" data-observed="${state.observed}">${state.observed}</span>
    <br><span class="muted">wants ${state.desired} · ${state.restarts} restart${state.restarts === 1 ? "" : "s"}</span>${last}
    ${state.last_error ? html`<br><span class="muted" data-error>${state.last_error}</span>` : ""}`;
}

/**
 * The table of every challenge with its lifecycle actions; with the reconciler on, `runtime`
 * holds its state per slug and adds a Runtime column.
 */
export function challengesPage(
  rows: ChallengeRow[],
  csrf: string,
  runtime?: Map<string, RuntimeStateRow>,
): string {
  const runtimeHead = runtime ? html`<th>Runtime</th>` : "";
  const table = rows.length
    ? html`<table><thead><tr><th>Challenge</th><th>Status</th>${runtimeHead}<th>Emission</th><th>Image</th><th>Upstream</th><th>Tokens</th><th>Updated</th><th></th></tr></thead>
      <tbody>${rows.map(
        (row) => html`<tr data-slug="${row.slug}">
          <td><strong>${row.name}</strong><br><code>${row.slug}</code></td>
          <td>${badge(row.status)}${row.status_reason ? html`<br><span class="muted">${row.status_reason}</span>` : ""}</td>
          ${runtime ? html`<td data-runtime>${runtimeCell(runtime.get(row.slug))}</td>` : ""}
          <td>${row.emission_percent}%</td>
          <td><code>${row.image}</code><br><span class="muted">v${row.version} · api ${row.api_version}</span></td>
          <td>${row.internal_base_url ? html`<code>${row.internal_base_url}</code>` : html`<span class="muted">none</span>`}</td>
          <td class="muted">challenge <code>${row.challenge_token_hint}</code><br>broker <code>${row.broker_token_hint}</code></td>
          <td class="muted">${row.updated_at.toISOString().replace("T", " ").slice(0, 16)}</td>
          <td>${actions(row, csrf)}</td>
        </tr>`,
      )}</tbody></table>`
    : html`<div class="empty">No challenges yet. Register one with <code>platform challenge register</code>.</div>`;
  return page("Challenges", html`<main><h1>Challenges</h1>${table}</main>`, { csrf });
}
