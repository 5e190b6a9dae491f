import { existsSync, writeFileSync } from "node:fs";
import { isCi, testBackends } from "@platform/core/testing";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonInit, startTestMaster, type TestMaster } from "../../test/test-master.js";
import { type FakeChallenge, startFakeChallenge } from "../../test/weights/fake-challenge.js";
import { dashboardSize } from "./dashboard-svg.js";

const CHROMIUM = "/usr/bin/chromium";
const PATH = "/v1/challenges/dashboard.svg";

/** All text nodes of an SVG, after a real XML parser accepted it. */
function texts(svg: string): string[] {
  expect(XMLValidator.validate(svg)).toBe(true);
  const out: string[] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "#text") out.push(String(value));
        else if (key !== ":@") visit(value);
      }
    }
  };
  visit(new XMLParser({ preserveOrder: true, ignoreAttributes: true }).parse(svg));
  return out;
}

const challenge = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  name: `Challenge ${slug}`,
  image: "ghcr.io/org/challenge:1.2.0",
  version: "1.2.0",
  ...extra,
});

describe.each(await testBackends())("dashboard.svg on %s", (backend) => {
  let t: TestMaster;
  const fakes: FakeChallenge[] = [];
  const tokens: string[] = [];
  beforeAll(async () => {
    t = await startTestMaster(backend, (config) => {
      config.weights.retries = 0;
      config.weights.timeoutMs = 1_000;
      config.network = "testnet";
    });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all(fakes.map((fake) => fake.close()));
  });

  async function register(slug: string, fields: Record<string, unknown>, fake?: FakeChallenge) {
    const res = await t.fetch(
      "/v1/admin/challenges",
      jsonInit(
        "POST",
        challenge(slug, { ...(fake ? { internal_base_url: fake.url } : {}), ...fields }),
        t.admin,
      ),
    );
    expect(res.status).toBe(201);
    const body = await res.json();
    tokens.push(body.challenge_token, body.docker_broker_token);
    if (fake) fake.token = body.challenge_token;
  }

  it("shows an empty state before any challenge, with no credential", async () => {
    const res = await t.fetch(PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const svg = await res.text();
    expect(texts(svg)).toContain("No challenges to show yet");
    expect(svg).toContain(`height="${dashboardSize(0).height}"`);
  });

  it("shows non-draft challenges with health from the last collection, and nothing secret", async () => {
    const healthy = await startFakeChallenge({
      slug: "healthy",
      reply: () => ({ json: { challenge_slug: "healthy", weights: { "5Alice": 1, "5Bob": 1 } } }),
    });
    const broken = await startFakeChallenge({
      slug: "broken",
      reply: () => ({ status: 500, json: {} }),
    });
    fakes.push(healthy, broken);
    await register(
      "healthy",
      { name: "Healthy One", emission_percent: 70, status: "active" },
      healthy,
    );
    await register(
      "broken",
      { name: "Broken One", emission_percent: 30, status: "active" },
      broken,
    );
    await register("hidden", {
      name: "Hidden Draft",
      emission_percent: 5,
      status: "draft",
      secrets: { API_KEY: "sk-live-never-show" },
    });
    await register("resting", {
      name: "Resting",
      status: "inactive",
      metadata: { internal_notes: "do not publish" },
    });
    await register("hostile", { name: `<script>&"'`, status: "disabled" });

    expect(
      (await t.fetch("/v1/admin/weights/collect", { method: "POST", headers: t.admin })).status,
    ).toBe(200);
    const res = await t.fetch(PATH);
    const svg = await res.text();
    const shown = texts(svg);
    expect(shown).toEqual(
      expect.arrayContaining([
        "Challenges · testnet",
        "Healthy One",
        "Broken One",
        "Resting",
        `<script>&"'`,
        "ACTIVE",
        "INACTIVE",
        "DISABLED",
        "70%",
        "30%",
        "Upstream failed: HTTP 500",
        "Weights: 2 hotkeys · 70.0% of snapshot",
        "Upstream unknown: not collected yet",
      ]),
    );
    expect(shown.some((text) => /^Upstream ok · \d+ ms$/.test(text))).toBe(true);
    expect(shown.some((text) => text.includes("(burned to uid 0)"))).toBe(true); // no metagraph configured
    expect(shown.join("\n")).not.toContain("Hidden Draft");
    expect(svg).not.toContain("<script");
    expect(svg).toContain(`height="${dashboardSize(4).height}"`);
    for (const secret of [
      ...tokens,
      "sk-live-never-show",
      "do not publish",
      healthy.url,
      broken.url,
    ])
      expect(svg).not.toContain(secret);
  });

  it("answers over a real socket with the same headers, and refuses to be scripted", async () => {
    const server = await t.listen();
    const res = await fetch(`http://127.0.0.1:${server.port}${PATH}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(XMLValidator.validate(await res.text())).toBe(true);
  });
});

describe("dashboard.svg rendered by Chromium", () => {
  const available = existsSync(CHROMIUM);
  const ci = isCi();
  if (!available && !ci) {
    const bar = "!".repeat(78);
    console.warn(
      `\n${bar}\n!! dashboard PNG rendering SKIPPED: ${CHROMIUM} is not installed.\n!! CI=true makes this a failure.\n${bar}\n`,
    );
  }

  it.skipIf(!available && !ci)(
    "renders to a PNG of the computed size with real content",
    async () => {
      expect(available, `${CHROMIUM} is required under CI=true to render the dashboard`).toBe(true);
      const { chromium } = await import("playwright-core");
      const ok = await startFakeChallenge({
        slug: "c0",
        reply: () => ({ json: { challenge_slug: "c0", weights: { "5Alice": 2, "5Bob": 1 } } }),
      });
      const failing = await startFakeChallenge({ slug: "c1", reply: () => "hang" });
      const t = await startTestMaster("pglite", (config) => {
        config.weights.timeoutMs = 300;
        config.weights.retries = 0;
        config.weights.metagraph = new URL(
          "../../test/weights/metagraph-map.json",
          import.meta.url,
        ).pathname;
      });
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
        ],
      });
      try {
        const names = [
          `<script>&"'`,
          "A challenge with a name far too long to fit on its card",
          "Challenge number 2",
          "Challenge number 3",
        ];
        for (const [i, status] of (
          ["active", "active", "inactive", "disabled"] as const
        ).entries()) {
          const fake = [ok, failing][i];
          const res = await t.fetch(
            "/v1/admin/challenges",
            jsonInit(
              "POST",
              challenge(`c${i}`, {
                name: names[i],
                emission_percent: 25 * (i + 1) - 5,
                status,
                ...(fake ? { internal_base_url: fake.url } : {}),
              }),
              t.admin,
            ),
          );
          expect(res.status).toBe(201);
          if (fake) fake.token = (await res.json()).challenge_token;
        }
        expect(
          (await t.fetch("/v1/admin/weights/collect", { method: "POST", headers: t.admin })).status,
        ).toBe(200);
        const server = await t.listen();
        const { width, height } = dashboardSize(4);
        const page = await browser.newPage({ viewport: { width, height }, deviceScaleFactor: 1 });
        const requests: string[] = [];
        page.on("request", (request) => requests.push(request.url()));
        const errors: string[] = [];
        page.on("pageerror", (error) => errors.push(error.message));
        const url = `http://127.0.0.1:${server.port}${PATH}`;
        const response = await page.goto(url);
        expect(response?.status()).toBe(200);
        const png = await page.screenshot({ type: "png", timeout: 15_000 });
        if (process.env.DASHBOARD_PNG_OUT) writeFileSync(process.env.DASHBOARD_PNG_OUT, png);
        expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
        expect(png.readUInt32BE(16)).toBe(width);
        expect(png.readUInt32BE(20)).toBe(height);
        // Self-contained: the document fetched nothing but itself, and ran no script.
        expect(requests).toEqual([url]);
        expect(errors).toEqual([]);

        // Decode the screenshot in a blank page (the dashboard's CSP forbids data: images; a data: URL
        // does not taint the canvas) and measure it.
        const blank = await browser.newPage();
        const stats = await blank.evaluate(async (b64) => {
          const image = new Image();
          image.src = `data:image/png;base64,${b64}`;
          await image.decode();
          const canvas = document.createElement("canvas");
          canvas.width = image.width;
          canvas.height = image.height;
          const context = canvas.getContext("2d")!;
          context.drawImage(image, 0, 0);
          const { data } = context.getImageData(0, 0, image.width, image.height);
          const colours = new Set<number>();
          let nonBackground = 0;
          let dark = 0;
          let green = 0;
          let indigo = 0;
          for (let p = 0; p < data.length; p += 4) {
            const r = data[p]!;
            const g = data[p + 1]!;
            const b = data[p + 2]!;
            colours.add((r << 16) | (g << 8) | b);
            if (Math.abs(r - 0xf8) + Math.abs(g - 0xfa) + Math.abs(b - 0xfc) > 6) nonBackground++;
            if (r + g + b < 200) dark++;
            if (Math.abs(r - 0xdc) < 4 && Math.abs(g - 0xfc) < 4 && Math.abs(b - 0xe7) < 4) green++;
            if (Math.abs(r - 0x63) < 4 && Math.abs(g - 0x66) < 4 && Math.abs(b - 0xf1) < 4)
              indigo++;
          }
          return {
            pixels: data.length / 4,
            colours: colours.size,
            nonBackground,
            dark,
            green,
            indigo,
          };
        }, png.toString("base64"));
        expect(stats.colours).toBeGreaterThan(50); // anti-aliased text, not a flat fill
        expect(stats.nonBackground / stats.pixels).toBeGreaterThan(0.3); // white cards cover the grid
        expect(stats.dark).toBeGreaterThan(2_000); // text was drawn
        expect(stats.green).toBeGreaterThan(500); // two ACTIVE badges
        expect(stats.indigo).toBeGreaterThan(1_000); // emission bars
      } finally {
        await browser.close();
        await t.close();
        await Promise.all([ok.close(), failing.close()]);
      }
    },
    60_000,
  );
});
