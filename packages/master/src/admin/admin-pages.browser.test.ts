import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, launchChromium } from "../../test/chromium.js";
import { type EchoUpstream, startEchoUpstream } from "../../test/proxy/echo-upstream.js";
import { registerChallenge } from "../../test/proxy/register-challenge.js";
import { jsonInit, startTestMaster, type TestMaster } from "../../test/test-master.js";

const XSS = `<img src=x onerror="document.title='pwned'">`;

describe.runIf(chromiumAvailable())("admin pages in headless Chromium", () => {
  let t: TestMaster;
  // The admin pages are on the admin listener; challenge content on the public one.
  let url = "";
  let publicUrl = "";
  let browser: Browser;
  let challenge: EchoUpstream;

  beforeAll(async () => {
    t = await startTestMaster("pglite");
    const server = await t.listen();
    url = server.admin.url;
    publicUrl = server.url;
    challenge = await startEchoUpstream();
    for (const [slug, name, status] of [
      ["alpha", "Alpha Challenge", "active"],
      ["evil", XSS, "draft"],
    ] as const) {
      await t.fetch(
        "/v1/admin/challenges",
        jsonInit(
          "POST",
          { slug, name, image: "ghcr.io/org/c:1.0", version: "1.0", status, emission_percent: 40 },
          t.admin,
        ),
      );
    }
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await challenge?.close();
  });

  it("signs in, lists challenges with hostile names as text, and deactivates one with a click", {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const first = await page.goto(`${url}/admin/challenges`);
    expect(first?.status()).toBe(401);
    await page.fill("#token", "wrong-token-wrong-token");
    await page.click("button[type=submit]");
    await page.waitForSelector("[role=alert]");
    expect(await page.textContent("[role=alert]")).toContain("not right");

    await page.fill("#token", t.adminToken);
    await page.click("button[type=submit]");
    await page.waitForURL(`${url}/admin`);
    expect(await page.textContent("main")).toContain("emission of active challenges");
    const cookies = await page.context().cookies();
    expect(cookies.find((cookie) => cookie.name === "platform_admin")).toMatchObject({
      httpOnly: true,
      sameSite: "Strict",
    });

    await page.click("a[href='/admin/challenges']");
    await page.waitForURL(`${url}/admin/challenges`);
    expect(await page.locator("tr[data-slug=evil] strong").textContent()).toBe(XSS);
    expect(await page.locator("tr[data-slug=evil] img").count()).toBe(0);
    expect(await page.title()).not.toBe("pwned");

    await page.click("tr[data-slug=alpha] button[data-action=deactivate]");
    await page.waitForURL(`${url}/admin/challenges`);
    expect(await page.locator("tr[data-slug=alpha] .badge").textContent()).toBe("inactive");
    expect((await t.master.store.get("alpha")).status).toBe("inactive");

    await page.screenshot({ path: "/tmp/admin-challenges.png", fullPage: true });
    await page.click("text=Sign out");
    await page.waitForURL(`${url}/admin/login`);
    expect((await page.goto(`${url}/admin`))?.status()).toBe(401);
    expect(errors).toEqual([]);
  });

  // issue 10, item 1: a challenge's page, served by the proxy, in the browser of a signed-in
  // admin, reads the CSRF token from /admin/challenges and disables another challenge. With the
  // admin pages on their own origin, the same script gets nothing.
  it("a challenge page cannot drive the admin pages of a signed-in admin", {
    timeout: 60_000,
  }, async () => {
    await registerChallenge(t, "victim", "active");
    await registerChallenge(t, "hostile", "active", challenge.url);
    const attack = `
      const report = {};
      async function attempt(label, base, mode) {
        const result = (report[label] = {});
        try {
          const page = await fetch(base + "/admin/challenges", { credentials: "include", mode });
          result.status = page.status;
          const text = await page.text();
          result.csrf = (/name="csrf" value="([^"]+)"/.exec(text) || [])[1] || null;
        } catch (error) {
          result.read = String(error);
        }
        try {
          const post = await fetch(base + "/admin/challenges/victim/disable", {
            method: "POST",
            credentials: "include",
            mode,
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: "csrf=" + encodeURIComponent(result.csrf || ""),
          });
          result.post = post.status;
        } catch (error) {
          result.postError = String(error);
        }
      }
      (async () => {
        await attempt("same-origin", "", "same-origin");
        await attempt("admin-origin", ${JSON.stringify(url)}, "cors");
        await attempt("admin-origin-blind", ${JSON.stringify(url)}, "no-cors");
        document.cookie = "platform_admin=tossed; path=/admin";
        window.attackReport = report;
        document.title = "attack done";
      })();`;
    challenge.on("/page", (_req, res) => {
      const html = `<!doctype html><title>a challenge</title><script>${attack}</script>`;
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "set-cookie": ["platform_admin=planted; Path=/admin; HttpOnly", "theirs=1; Path=/"],
      });
      res.end(html);
    });

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${url}/admin/login`);
    await page.fill("#token", t.adminToken);
    await page.click("button[type=submit]");
    await page.waitForURL(`${url}/admin`);
    const session = (await context.cookies()).find((cookie) => cookie.name === "platform_admin");
    expect(session?.value).toMatch(/^v2\./);

    const response = await page.goto(`${publicUrl}/challenges/hostile/page`);
    expect(response?.status()).toBe(200);
    // The proxied Set-Cookie never reaches the browser.
    expect(await response?.headerValue("set-cookie")).toBeNull();
    await page.waitForFunction(() => document.title === "attack done", undefined, {
      timeout: 20_000,
    });
    const report = (await page.evaluate(
      () => (window as unknown as { attackReport: unknown }).attackReport,
    )) as Record<
      string,
      { status?: number; csrf?: string | null; post?: number; read?: string; postError?: string }
    >;
    // On the public origin there are no admin pages; the admin origin is another origin, so
    // its pages cannot be read, and a blind post has neither CSRF token nor the right Origin.
    expect(report["same-origin"]).toMatchObject({ status: 404, csrf: null, post: 404 });
    expect(report["admin-origin"]?.csrf ?? null).toBeNull();
    expect(report["admin-origin"]?.read).toMatch(/TypeError/);
    expect(report["admin-origin-blind"]?.csrf ?? null).toBeNull();
    expect((await t.master.store.get("victim")).status).toBe("active");
    expect((await t.master.store.get("hostile")).status).toBe("active");

    const cookies = await context.cookies();
    expect(cookies.map((cookie) => cookie.value)).not.toContain("planted");
    expect(cookies.find((cookie) => cookie.name === "theirs")).toBeUndefined();
    // The admin is still signed in with the session the master issued.
    await page.goto(`${url}/admin/challenges`);
    expect(await page.locator("tr[data-slug=victim] .badge").textContent()).toBe("active");
    await context.close();
  });
});
