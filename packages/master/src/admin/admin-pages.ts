import { HttpError, type RouteContext, Slug, secretsEqual } from "@platform/core";
import { Type } from "@sinclair/typebox";
import type { MasterContext } from "../master-context.js";
import { reconcilerOf } from "../reconciler/reconciler-routes.js";
import { presentedAdminToken } from "./admin-auth.js";
import { challengesPage, indexPage, loginPage } from "./admin-pages-view.js";
import { ADMIN_SESSION_COOKIE, AdminSessions, readCookie, sessionCookie } from "./admin-session.js";

// No scripts at all, styles inline only, forms may post only here, never framed.
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on our own form posts.
  "referrer-policy": "same-origin",
};

function htmlResponse(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...PAGE_HEADERS, ...headers } });
}

function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, {
    status: 303,
    headers: { location, "cache-control": "no-store", ...headers },
  });
}

const FORM = ["application/x-www-form-urlencoded"];
const SlugParams = Type.Object({ slug: Slug });

function form(body: Uint8Array): URLSearchParams {
  return new URLSearchParams(new TextDecoder().decode(body));
}

function isSecure(request: Request): boolean {
  return (
    new URL(request.url).protocol === "https:" ||
    request.headers.get("x-forwarded-proto") === "https"
  );
}

/**
 * The admin pages: /admin and /admin/challenges, for people in a browser. A browser signs in
 * once with the admin token through a form and gets an HttpOnly, SameSite=Strict session
 * cookie; scripts and curl may send the token in headers instead. Unauthenticated page views
 * answer 401 with the sign-in form. Every state-changing form carries a CSRF token derived from
 * the session, and a cross-origin Origin header is refused.
 */
export function registerAdminPages(context: MasterContext): void {
  // The admin listener's app: nothing here is served on the public origin (docs/master.md).
  const { adminApp: app, store, config } = context;
  const sessions = new AdminSessions(context.masterKey, config.adminToken);

  /** The session of a signed-in browser, "header" for a token in headers, or null. */
  const who = (request: Request): string | "header" | null => {
    const token = presentedAdminToken(request.headers);
    if (token !== null) return secretsEqual(token, config.adminToken) ? "header" : null;
    const session = readCookie(request.headers, ADMIN_SESSION_COOKIE);
    return session && sessions.verify(session) ? session : null;
  };

  const viewPage = (path: string, render: (csrf: string) => Promise<string>) =>
    app.route({
      method: "GET",
      path,
      hidden: true,
      handler: async ({ request }) => {
        const session = who(request);
        if (!session) return htmlResponse(loginPage(null), 401);
        return htmlResponse(await render(session === "header" ? "" : sessions.csrfToken(session)));
      },
    });

  /** Refuse a form post that is not from a signed-in browser on this origin with its CSRF token. */
  const checkForm = ({ request, body }: RouteContext<unknown, unknown, unknown, Uint8Array>) => {
    const session = who(request);
    if (!session) throw new HttpError(401, "admin_unauthorized", "Sign in first");
    const origin = request.headers.get("origin");
    const host = request.headers.get("host") ?? new URL(request.url).host;
    if (origin && origin !== "null" && new URL(origin).host !== host) {
      throw new HttpError(403, "cross_origin_refused", "Form posted from another origin");
    }
    if (origin === "null")
      throw new HttpError(403, "cross_origin_refused", "Form posted from an opaque origin");
    if (
      session !== "header" &&
      !sessions.verifyCsrf(session, form(body).get("csrf") ?? undefined)
    ) {
      throw new HttpError(
        403,
        "csrf_invalid",
        "The form expired or did not come from this site; reload the page",
      );
    }
  };

  app.route({
    method: "GET",
    path: "/admin/login",
    hidden: true,
    handler: () => htmlResponse(loginPage(null)),
  });

  app.route({
    method: "POST",
    path: "/admin/login",
    hidden: true,
    body: "raw",
    contentTypes: FORM,
    bodyLimit: 4096,
    handler: ({ request, body }) => {
      const token = form(body).get("token") ?? "";
      if (!secretsEqual(token.trim(), config.adminToken)) {
        return htmlResponse(loginPage("That admin token is not right."), 401);
      }
      return redirect("/admin", {
        "set-cookie": sessionCookie(sessions.issue(), isSecure(request)),
      });
    },
  });

  app.route({
    method: "POST",
    path: "/admin/logout",
    hidden: true,
    body: "raw",
    contentTypes: FORM,
    bodyLimit: 4096,
    handler: (ctx) => {
      checkForm(ctx);
      return redirect("/admin/login", {
        "set-cookie": sessionCookie("", isSecure(ctx.request), 0),
      });
    },
  });

  viewPage("/admin", async (csrf) => indexPage(await store.list(), csrf));
  viewPage("/admin/challenges", async (csrf) => {
    // Looked up per request: the reconciler registers after the pages.
    const states = await reconcilerOf(context)?.state.list();
    const runtime = states && new Map(states.map((state) => [state.slug, state]));
    return challengesPage(await store.list(), csrf, runtime);
  });

  for (const [action, status] of [
    ["activate", "active"],
    ["deactivate", "inactive"],
    ["disable", "disabled"],
  ] as const) {
    app.route({
      method: "POST",
      path: `/admin/challenges/:slug/${action}`,
      hidden: true,
      params: SlugParams,
      body: "raw",
      contentTypes: FORM,
      bodyLimit: 4096,
      handler: async (ctx) => {
        checkForm(ctx);
        await store.setStatus(
          ctx.params.slug,
          status,
          action === "disable" ? "disabled from the admin page" : null,
        );
        return redirect("/admin/challenges");
      },
    });
  }
}
