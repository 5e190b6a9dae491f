import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, launchChromium } from "../../test/chromium.js";
import { jsonInit, startTestMaster, type TestMaster } from "../../test/test-master.js";

const XSS = `<img src=x onerror="document.title='pwned'">`;

describe.runIf(chromiumAvailable())("admin pages in headless Chromium", () => {
  let t: TestMaster;
  let url = "";
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestMaster("pglite");
    url = (await t.listen()).url;
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
});
