import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import type { StoredWeightsSnapshot } from "../weights/weights-snapshot-store.js";
import { fitText, xmlText } from "./_svg-text.js";
import {
  buildDashboardModel,
  DASHBOARD_LAYOUT,
  type DashboardCard,
  type DashboardChallenge,
  type DashboardModel,
  dashboardSize,
  formatUtc,
  renderDashboardSvg,
} from "./dashboard-svg.js";

const NOW = new Date("2025-06-01T12:00:00Z");

const card = (overrides: Partial<DashboardCard> = {}): DashboardCard => ({
  slug: "alpha",
  name: "Alpha",
  status: "active",
  emission_percent: 50,
  health: "ok",
  latency_ms: 42,
  error: null,
  hotkeys: 12,
  share: 0.5,
  collected_at: "2025-06-01T11:55:00.000Z",
  ...overrides,
});

const render = (cards: DashboardCard[]) =>
  renderDashboardSvg({
    network: "testnet",
    generated_at: NOW,
    snapshot: { id: 3, computed_at: "2025-06-01T11:55:00.000Z", burned: false },
    cards,
  });

/** Parse with a real XML parser: fails the test on anything not well-formed. */
function parse(svg: string) {
  const valid = XMLValidator.validate(svg);
  expect(valid).toBe(true);
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@",
    preserveOrder: true,
    processEntities: true,
  }).parse(svg) as unknown[];
}

/** Every element name and every text node of a parsed (preserveOrder) tree. */
function walk(
  nodes: unknown[],
  names: string[] = [],
  texts: string[] = [],
): { names: string[]; texts: string[] } {
  for (const node of nodes as Record<string, unknown>[]) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "#text") texts.push(String(value));
      else if (key !== ":@") {
        names.push(key);
        if (Array.isArray(value)) walk(value, names, texts);
      }
    }
  }
  return { names, texts };
}

describe("renderDashboardSvg", () => {
  it("is a well-formed, self-contained SVG document", () => {
    const svg = render([
      card(),
      card({
        slug: "beta",
        name: "Beta",
        status: "inactive",
        health: "failed",
        error: "HTTP 500",
        latency_ms: 3,
      }),
    ]);
    expect(svg.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    const tree = parse(svg);
    const { names, texts } = walk(tree);
    expect(names).toContain("svg");
    for (const forbidden of ["script", "foreignObject", "image", "a", "use", "iframe"])
      expect(names).not.toContain(forbidden);
    expect(svg).not.toMatch(/href|@import|url\(|@font-face|on[a-z]+=/i);
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
    expect(texts).toEqual(
      expect.arrayContaining([
        "Challenges · testnet",
        "Alpha",
        "alpha",
        "ACTIVE",
        "INACTIVE",
        "Upstream ok · 42 ms",
        "Upstream failed: HTTP 500",
        "Weights: 12 hotkeys · 50.0% of snapshot",
        "Collected 2025-06-01 11:55 UTC",
        "50%",
      ]),
    );
  });

  it("escapes every value: a hostile name, slug or error comes out as inert text", () => {
    const svg = render([
      card({ name: `<script>&"'` }),
      card({
        name: `<script>alert(1)</script> and a long tail`,
        error: `</text><script>x</script>`,
        health: "failed",
      }),
    ]);
    const { names, texts } = walk(parse(svg));
    expect(names).not.toContain("script");
    expect(svg).not.toContain("<script");
    expect(svg).toContain(">&lt;script&gt;&amp;&quot;&apos;</text>");
    expect(texts).toContain(`<script>&"'`);
    expect(texts.some((text) => text.startsWith("<script>alert(1)"))).toBe(true);
    expect(texts.some((text) => text.startsWith("Upstream failed: </text><script>"))).toBe(true);
  });

  it("drops characters XML cannot carry instead of producing an unparsable document", () => {
    const svg = render([card({ name: "bad\u0000\u0001\u001b\uFFFE\uD800name\ttab", slug: "ok" })]);
    const { texts } = walk(parse(svg));
    expect(texts).toContain("badname tab");
  });

  it("keeps wide characters and emoji whole when cutting a long name", () => {
    const svg = render([
      card({ name: "🚀".repeat(60) }),
      card({ name: "挑战".repeat(40) }),
      card({ name: "x".repeat(300) }),
    ]);
    const { texts } = walk(parse(svg));
    const cut = texts.filter((text) => text.endsWith("…"));
    expect(cut).toHaveLength(3);
    for (const text of cut) expect(text.length).toBeLessThan(60);
    expect(cut[0]!.replace("…", "")).toMatch(/^(🚀)+$/u);
  });

  it("shows unknown health and no weights for a challenge the last snapshot did not include", () => {
    const { texts } = walk(
      parse(
        render([
          card({
            health: "unknown",
            latency_ms: null,
            hotkeys: null,
            share: null,
            collected_at: null,
            status: "disabled",
          }),
        ]),
      ),
    );
    expect(texts).toEqual(
      expect.arrayContaining([
        "Upstream unknown: not collected yet",
        "Weights: not in the last snapshot",
        "Never collected",
        "DISABLED",
      ]),
    );
  });

  it("draws the emission bar in proportion, clamped to the track", () => {
    const widths = (emission: number) => {
      const svg = render([card({ emission_percent: emission })]);
      const track = Number(/class="track" x="16" y="86" width="([\d.]+)"/.exec(svg)![1]);
      const bar = /class="bar" x="16" y="86" width="([\d.]+)"/.exec(svg);
      return { track, bar: bar ? Number(bar[1]) : 0 };
    };
    const half = widths(50);
    expect(half.bar).toBeCloseTo(half.track / 2, 1);
    expect(widths(100).bar).toBeCloseTo(widths(100).track, 1);
    expect(widths(0).bar).toBe(0);
    expect(widths(0.01).bar).toBe(4); // a sliver stays visible
  });

  it("sizes the document from the number of cards, three per row", () => {
    const { width, padding, header, footer, cardHeight, gap, emptyHeight } = DASHBOARD_LAYOUT;
    expect(dashboardSize(0)).toEqual({ width, height: padding + header + emptyHeight + footer });
    expect(dashboardSize(1).height).toBe(padding + header + cardHeight + footer);
    expect(dashboardSize(3).height).toBe(dashboardSize(1).height);
    expect(dashboardSize(4).height).toBe(padding + header + 2 * cardHeight + gap + footer);
    expect(dashboardSize(7).height).toBe(padding + header + 3 * cardHeight + 2 * gap + footer);
    for (const count of [0, 1, 4, 7]) {
      const svg = render(Array.from({ length: count }, (_, i) => card({ slug: `c${i}` })));
      const root = parse(svg).find((node) => "svg" in (node as object)) as {
        ":@": Record<string, string>;
      };
      expect(Number(root[":@"]["@height"])).toBe(dashboardSize(count).height);
      expect(root[":@"]["@viewBox"]).toBe(`0 0 ${width} ${dashboardSize(count).height}`);
      expect(svg.match(/class="card"/g)?.length ?? 0).toBe(Math.max(count, 1));
    }
  });

  it("lays cards out in a grid inside the width", () => {
    const svg = render(Array.from({ length: 5 }, (_, i) => card({ slug: `c${i}` })));
    const origins = [...svg.matchAll(/<g transform="translate\(([\d.]+) ([\d.]+)\)">/g)].map(
      (m) => [Number(m[1]), Number(m[2])],
    );
    expect(new Set(origins.map(([x]) => x)).size).toBe(3);
    expect(new Set(origins.map(([, y]) => y)).size).toBe(2);
    for (const [x] of origins)
      expect(x! + 292).toBeLessThanOrEqual(DASHBOARD_LAYOUT.width - DASHBOARD_LAYOUT.padding);
  });

  it("has an empty state", () => {
    const svg = renderDashboardSvg({
      network: "platform",
      generated_at: NOW,
      snapshot: null,
      cards: [],
    });
    const { texts } = walk(parse(svg));
    expect(texts).toContain("No challenges to show yet");
    expect(texts.some((text) => text.includes("no weights snapshot yet"))).toBe(true);
    expect(texts.some((text) => text.includes("on chain"))).toBe(false);
  });

  it("says where the master's weights were last confirmed on chain, when it sets them", () => {
    const facts = (chain: DashboardModel["chain"]) =>
      walk(
        parse(
          renderDashboardSvg({
            network: "platform",
            generated_at: NOW,
            snapshot: null,
            ...(chain === undefined ? {} : { chain }),
            cards: [],
          }),
        ),
      ).texts.join(" ");
    expect(facts({ block: 1234, kind: "commit" })).toContain(
      "weights on chain: revealed in block #1234",
    );
    expect(facts({ block: 77, kind: "set_weights" })).toContain(
      "weights on chain: set in block #77",
    );
    expect(facts(null)).toContain("no weights confirmed on chain yet");
    expect(facts(undefined)).not.toContain("on chain");
  });
});

describe("buildDashboardModel", () => {
  const challenges: DashboardChallenge[] = [
    { slug: "zeta", name: "Zeta", status: "active", emission_percent: 10 },
    { slug: "draft", name: "Draft", status: "draft", emission_percent: 90 },
    { slug: "off", name: "Off", status: "disabled", emission_percent: 80 },
    { slug: "alpha", name: "Alpha", status: "active", emission_percent: 60 },
    { slug: "idle", name: "Idle", status: "inactive", emission_percent: 0 },
  ];
  const latest = {
    id: 9,
    computed_at: "2025-06-01T11:00:00.000Z",
    burned: false,
    sources: [
      {
        slug: "alpha",
        emission_percent: 60,
        status: "ok",
        epoch: 1,
        hotkeys: 4,
        share: 0.857,
        error: null,
      },
      {
        slug: "zeta",
        emission_percent: 10,
        status: "failed",
        epoch: null,
        hotkeys: 0,
        share: 0,
        error: "HTTP 500",
      },
    ],
    collection: {
      challenges: [
        {
          slug: "alpha",
          status: "ok",
          latency_ms: 12,
          attempts: 1,
          error: null,
          dropped_invalid: 0,
          dropped_unknown: 0,
        },
        {
          slug: "zeta",
          status: "failed",
          latency_ms: 800,
          attempts: 3,
          error: "HTTP 500",
          dropped_invalid: 0,
          dropped_unknown: 0,
        },
      ],
    },
  } as unknown as StoredWeightsSnapshot;

  it("leaves drafts out and orders active first, then by emission", () => {
    const model = buildDashboardModel(challenges, latest, { network: "n", now: NOW });
    expect(model.cards.map((c) => c.slug)).toEqual(["alpha", "zeta", "idle", "off"]);
  });

  it("reads health, latency, hotkeys and share from the last snapshot", () => {
    const model = buildDashboardModel(challenges, latest, { network: "n", now: NOW });
    expect(model.cards[0]).toMatchObject({
      health: "ok",
      latency_ms: 12,
      hotkeys: 4,
      share: 0.857,
      collected_at: latest.computed_at,
    });
    expect(model.cards[1]).toMatchObject({
      health: "failed",
      error: "HTTP 500",
      hotkeys: 0,
      share: 0,
    });
    expect(model.cards[2]).toMatchObject({
      health: "unknown",
      latency_ms: null,
      hotkeys: null,
      share: null,
      collected_at: null,
    });
    expect(model.snapshot).toEqual({ id: 9, computed_at: latest.computed_at, burned: false });
  });

  it("works before any snapshot", () => {
    const model = buildDashboardModel(challenges, null, { network: "n" });
    expect(model.snapshot).toBeNull();
    expect(model.cards.every((c) => c.health === "unknown")).toBe(true);
  });
});

describe("svg text helpers", () => {
  it("xmlText escapes the five markup characters and normalises whitespace", () => {
    expect(xmlText(`a<b>&"'\n\tc`)).toBe("a&lt;b&gt;&amp;&quot;&apos; c");
  });

  it("fitText leaves short text alone and cuts long text with an ellipsis", () => {
    expect(fitText("short", 200, 12)).toBe("short");
    const cut = fitText("a".repeat(100), 100, 12);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut.length).toBeLessThan(20);
  });

  it("formatUtc writes minutes in UTC", () => {
    expect(formatUtc("2025-01-02T03:04:59.999Z")).toBe("2025-01-02 03:04 UTC");
    expect(formatUtc("nonsense")).toBe("unknown time");
  });
});
