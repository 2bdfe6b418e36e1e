/**
 * The demo's small shops on one port, each under its slug (`/fortune/...`) with its own wallet: every
 * shop is a full merchant host (`merchantApp`: x402 routes, OpenAPI, reference page), reached with the
 * slug taken off the path. `/` lists them.
 */
import { Hono } from "hono";
import { html } from "hono/html";
import { type MerchantAppOptions, merchantApp } from "../../merchant-kit/app.ts";
import type { Merchant } from "../../merchant-kit/catalogue.ts";

export async function shopsApp(
  shops: readonly { merchant: Merchant; name: string }[],
  options: MerchantAppOptions,
): Promise<Hono> {
  const apps = new Map<string, (request: Request) => Response | Promise<Response>>();
  for (const { merchant } of shops) apps.set(merchant.name, (await merchantApp(merchant, options)).fetch);

  const app = new Hono();
  app.get("/", (c) =>
    c.html(
      html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Demo shops</title></head>
<body><h1>Demo shops</h1><p>Small paid APIs of the devnet demo, each with its own wallet.</p><ul>
${shops.map(
  ({ merchant, name }) =>
    html`<li><a href="${merchant.publicUrl}/">${name}</a>: ${merchant.endpoints.map((e) => `${e.method} ${e.path} ($${e.price})`).join(", ")}</li>`,
)}
</ul></body></html>`,
    ),
  );
  app.all("/:slug{[a-z0-9-]+}/*", (c) => forward(c.req.raw, c.req.param("slug")));
  app.all("/:slug{[a-z0-9-]+}", (c) => forward(c.req.raw, c.req.param("slug")));

  function forward(request: Request, slug: string) {
    const shop = apps.get(slug);
    if (!shop)
      return Response.json({ error: { code: "not_found", message: `no shop "${slug}"` } }, { status: 404 });
    const url = new URL(request.url);
    url.pathname = url.pathname.slice(slug.length + 1) || "/";
    return shop(new Request(url, request));
  }
  return app;
}
