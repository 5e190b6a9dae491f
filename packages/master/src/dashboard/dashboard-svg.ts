import type { ChallengeStatus } from "@platform/core";
import type { StoredWeightsSnapshot } from "../weights/weights-snapshot-store.js";
import { fitText, textWidth, xmlText } from "./_svg-text.js";

/** Upstream health of a challenge as its last weights collection saw it. */
export type DashboardHealth = "ok" | "failed" | "unknown";

/** One card of the dashboard. */
export interface DashboardCard {
  slug: string;
  name: string;
  status: ChallengeStatus;
  emission_percent: number;
  health: DashboardHealth;
  latency_ms: number | null;
  /** Why the last collection failed (a short, public-safe reason). */
  error: string | null;
  /** Hotkeys with weight and this challenge's fraction of the last snapshot; null when it was not in it. */
  hotkeys: number | null;
  share: number | null;
  collected_at: string | null;
}

/** Everything the dashboard shows. */
export interface DashboardModel {
  network: string;
  generated_at: Date;
  snapshot: { id: number; computed_at: string; burned: boolean } | null;
  /**
   * The master's validator on chain (absent when it runs none): the block where its weights were
   * last confirmed (a set_weights, or the reveal of a commit), null before the first.
   */
  chain?: DashboardChainWeights | null;
  cards: DashboardCard[];
}

/** Where the master's validator last had its weights confirmed on chain. */
export interface DashboardChainWeights {
  block: number;
  kind: "set_weights" | "commit";
}

/** The registry fields a card needs. */
export interface DashboardChallenge {
  slug: string;
  name: string;
  status: ChallengeStatus;
  emission_percent: number;
}

const STATUS_ORDER: Record<ChallengeStatus, number> = {
  active: 0,
  inactive: 1,
  disabled: 2,
  draft: 3,
};

/**
 * The dashboard's content: one card per non-draft challenge (active first, then by emission),
 * with health, hotkeys and share read from the latest snapshot.
 */
export function buildDashboardModel(
  challenges: readonly DashboardChallenge[],
  latest: StoredWeightsSnapshot | null,
  options: { network: string; now?: Date; chain?: DashboardChainWeights | null },
): DashboardModel {
  const cards = challenges
    .filter((c) => c.status !== "draft")
    .sort(
      (a, b) =>
        STATUS_ORDER[a.status] - STATUS_ORDER[b.status] ||
        b.emission_percent - a.emission_percent ||
        (a.slug < b.slug ? -1 : 1),
    )
    .map((c): DashboardCard => {
      const probe = latest?.collection.challenges.find((entry) => entry.slug === c.slug);
      const source = latest?.sources.find((entry) => entry.slug === c.slug);
      return {
        slug: c.slug,
        name: c.name,
        status: c.status,
        emission_percent: c.emission_percent,
        health: probe ? probe.status : "unknown",
        latency_ms: probe?.latency_ms ?? null,
        error: probe?.error ?? null,
        hotkeys: source ? source.hotkeys : null,
        share: source ? source.share : null,
        collected_at: probe && latest ? latest.computed_at : null,
      };
    });
  return {
    network: options.network,
    generated_at: options.now ?? new Date(),
    snapshot: latest
      ? { id: latest.id, computed_at: latest.computed_at, burned: latest.burned }
      : null,
    ...(options.chain === undefined ? {} : { chain: options.chain }),
    cards,
  };
}

/** Layout of the SVG, in px. */
export const DASHBOARD_LAYOUT = {
  width: 960,
  padding: 24,
  header: 92,
  columns: 3,
  gap: 18,
  cardHeight: 178,
  emptyHeight: 132,
  footer: 36,
} as const;

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

const BADGE: Record<ChallengeStatus, { fill: string; text: string }> = {
  active: { fill: "#dcfce7", text: "#166534" },
  inactive: { fill: "#f1f5f9", text: "#475569" },
  disabled: { fill: "#fee2e2", text: "#991b1b" },
  draft: { fill: "#fef9c3", text: "#854d0e" },
};
const HEALTH: Record<DashboardHealth, string> = {
  ok: "#16a34a",
  failed: "#dc2626",
  unknown: "#94a3b8",
};

const STYLE = `
  .bg { fill: #f8fafc; }
  .card { fill: #ffffff; stroke: #e2e8f0; stroke-width: 1; }
  text { font-family: ${FONT}; fill: #0f172a; }
  .title { font-size: 24px; font-weight: 700; letter-spacing: -0.01em; }
  .subtitle { font-size: 13px; fill: #64748b; }
  .name { font-size: 15px; font-weight: 650; }
  .slug { font-family: ${MONO}; font-size: 12px; fill: #64748b; }
  .label { font-size: 12px; fill: #64748b; }
  .value { font-size: 12px; font-weight: 600; }
  .line { font-size: 12.5px; fill: #334155; }
  .muted { font-size: 11.5px; fill: #94a3b8; }
  .badge { font-size: 10.5px; font-weight: 700; letter-spacing: 0.06em; }
  .track { fill: #e2e8f0; }
  .bar { fill: #6366f1; }
  .empty-title { font-size: 17px; font-weight: 650; }
`;

/** "2025-01-02 12:34 UTC": unambiguous for every reader of a public page. */
export function formatUtc(iso: string | Date): string {
  const date = typeof iso === "string" ? new Date(iso) : iso;
  if (Number.isNaN(date.getTime())) return "unknown time";
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

function emission(value: number): string {
  return `${Number(value.toFixed(2))}%`;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The SVG's width and height for `cards` cards. */
export function dashboardSize(cards: number): { width: number; height: number } {
  const { width, padding, header, gap, cardHeight, emptyHeight, footer, columns } =
    DASHBOARD_LAYOUT;
  const rows = Math.ceil(cards / columns);
  const body = cards === 0 ? emptyHeight : rows * cardHeight + (rows - 1) * gap;
  return { width, height: padding + header + body + footer };
}

function renderCard(card: DashboardCard, x: number, y: number, width: number): string {
  const { cardHeight } = DASHBOARD_LAYOUT;
  const inner = width - 32;
  const badgeText = card.status.toUpperCase();
  const badgeWidth = Math.ceil(textWidth(badgeText, 10.5, 0.66) + 18);
  const badge = BADGE[card.status];
  const barWidth = round(inner * Math.min(1, Math.max(0, card.emission_percent / 100)));

  let health = "Upstream unknown: not collected yet";
  if (card.health === "ok")
    health = `Upstream ok${card.latency_ms !== null ? ` · ${card.latency_ms} ms` : ""}`;
  if (card.health === "failed") health = `Upstream failed${card.error ? `: ${card.error}` : ""}`;
  const weights =
    card.hotkeys === null || card.share === null
      ? "Weights: not in the last snapshot"
      : `Weights: ${card.hotkeys} hotkey${card.hotkeys === 1 ? "" : "s"} · ${percent(card.share)} of snapshot`;
  const collected = card.collected_at
    ? `Collected ${formatUtc(card.collected_at)}`
    : "Never collected";

  return [
    `<g transform="translate(${round(x)} ${round(y)})">`,
    `<rect class="card" x="0.5" y="0.5" width="${round(width - 1)}" height="${cardHeight - 1}" rx="12"/>`,
    `<text class="name" x="16" y="30">${xmlText(fitText(card.name, inner - badgeWidth - 12, 15, 0.66))}</text>`,
    `<text class="slug" x="16" y="49">${xmlText(fitText(card.slug, inner, 12, 0.6))}</text>`,
    `<rect x="${round(width - 16 - badgeWidth)}" y="15" width="${badgeWidth}" height="20" rx="10" fill="${badge.fill}"/>`,
    `<text class="badge" x="${round(width - 16 - badgeWidth / 2)}" y="29" text-anchor="middle" fill="${badge.text}" style="fill:${badge.text}">${xmlText(badgeText)}</text>`,
    `<text class="label" x="16" y="78">Emission share</text>`,
    `<text class="value" x="${width - 16}" y="78" text-anchor="end">${xmlText(emission(card.emission_percent))}</text>`,
    `<rect class="track" x="16" y="86" width="${inner}" height="8" rx="4"/>`,
    barWidth > 0
      ? `<rect class="bar" x="16" y="86" width="${Math.max(barWidth, 4)}" height="8" rx="4"/>`
      : "",
    `<circle cx="20" cy="116" r="4.5" fill="${HEALTH[card.health]}"/>`,
    `<text class="line" x="31" y="120">${xmlText(fitText(health, inner - 15, 12.5))}</text>`,
    `<text class="line" x="16" y="143">${xmlText(fitText(weights, inner, 12.5))}</text>`,
    `<text class="muted" x="16" y="164">${xmlText(collected)}</text>`,
    "</g>",
  ]
    .filter(Boolean)
    .join("");
}

/**
 * Render the dashboard as one self-contained SVG document: no scripts, links, external fonts or
 * images; every value from the registry or a challenge goes through {@link xmlText}.
 */
export function renderDashboardSvg(model: DashboardModel): string {
  const { width, padding, header, columns, gap, cardHeight, emptyHeight } = DASHBOARD_LAYOUT;
  const { height } = dashboardSize(model.cards.length);
  const contentWidth = width - 2 * padding;
  const cardWidth = (contentWidth - (columns - 1) * gap) / columns;
  const active = model.cards.filter((c) => c.status === "active").length;

  const facts = [
    `${model.cards.length} challenge${model.cards.length === 1 ? "" : "s"}`,
    `${active} active`,
  ];
  if (model.snapshot) {
    facts.push(
      `weights snapshot #${model.snapshot.id} at ${formatUtc(model.snapshot.computed_at)}${model.snapshot.burned ? " (burned to uid 0)" : ""}`,
    );
  } else {
    facts.push("no weights snapshot yet");
  }
  if (model.chain === null) facts.push("no weights confirmed on chain yet");
  else if (model.chain) {
    facts.push(
      model.chain.kind === "commit"
        ? `weights on chain: revealed in block #${model.chain.block}`
        : `weights on chain: set in block #${model.chain.block}`,
    );
  }
  const title = `Challenges · ${model.network}`;
  const description = `${facts.join(" · ")}.`;

  const parts: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="dashboard-title dashboard-desc">`,
    `<title id="dashboard-title">${xmlText(title)}</title>`,
    `<desc id="dashboard-desc">${xmlText(description)}</desc>`,
    `<style>${STYLE}</style>`,
    `<rect class="bg" width="${width}" height="${height}"/>`,
    `<text class="title" x="${padding}" y="${padding + 30}">${xmlText(fitText(title, contentWidth, 24, 0.6))}</text>`,
    `<text class="subtitle" x="${padding}" y="${padding + 56}">${xmlText(fitText(description, contentWidth, 13))}</text>`,
  ];

  const top = padding + header;
  if (model.cards.length === 0) {
    parts.push(
      `<g transform="translate(${padding} ${top})">`,
      `<rect class="card" x="0.5" y="0.5" width="${contentWidth - 1}" height="${emptyHeight - 1}" rx="12" stroke-dasharray="6 5"/>`,
      `<text class="empty-title" x="${contentWidth / 2}" y="58" text-anchor="middle">No challenges to show yet</text>`,
      `<text class="label" x="${contentWidth / 2}" y="84" text-anchor="middle">Register one with: platform challenge register &lt;slug&gt; &lt;image&gt; &lt;emission&gt;, then activate it.</text>`,
      "</g>",
    );
  }
  model.cards.forEach((card, i) => {
    const column = i % columns;
    const row = Math.floor(i / columns);
    parts.push(
      renderCard(
        card,
        padding + column * (cardWidth + gap),
        top + row * (cardHeight + gap),
        cardWidth,
      ),
    );
  });
  parts.push(
    `<text class="muted" x="${padding}" y="${height - 14}">${xmlText(`Generated ${formatUtc(model.generated_at)} by platform-master`)}</text>`,
    "</svg>",
  );
  return parts.join("\n");
}
