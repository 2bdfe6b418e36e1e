/**
 * The demo's small shops on one port, each under its slug (`/fortune/...`) with its own wallet: every
 * shop is a full merchant host (`merchantApp`: x402 routes, OpenAPI, reference page), reached with the
 * slug taken off the path. `/` lists them.
 */
import { Hono } from "hono";
import { html } from "../../common/html.ts";
import { type MerchantAppOptions, merchantApp } from "../../merchant-kit/app.ts";
import type { Merchant } from "../../merchant-kit/catalogue.ts";
import { documentShell, noticeBanner } from "../../reports/page.ts";

export async function shopsApp(
  shops: readonly { merchant: Merchant; name: string }[],
  options: MerchantAppOptions,
): Promise<Hono> {
  const apps = new Map<string, (request: Request, env?: unknown) => Response | Promise<Response>>();
  for (const { merchant } of shops) apps.set(merchant.name, (await merchantApp(merchant, options)).fetch);

  const app = new Hono();
  // Styled like the report pages, the demo's banner on top.
  const rows = shops.map(
    ({ merchant, name }) =>
      html`<tr><th scope="row"><a href="${merchant.publicUrl}/">${name}</a></th><td><code title="${merchant.payTo}">${merchant.payTo}</code></td><td>${merchant.endpoints.map(
        (e, i) =>
          html`${i > 0 ? html`<br>` : ""}<code>${e.method} ${e.path}</code> $${e.price}${e.listed === false ? " (unlisted)" : ""}`,
      )}</td></tr>`,
  );
  const index = documentShell(
    "Demo shops",
    html`${noticeBanner(options.notice)}
<header>
<p class="nav"><a href="/">Demo shops</a></p>
<h1>Demo shops</h1>
<p>Small paid APIs of the devnet demo, each with its own wallet. Each shop's name opens its API reference.</p>
</header>
<main>
<div class="scroll"><table>
<caption>${shops.length} shops</caption>
<thead><tr><th scope="col">Shop</th><th scope="col">Wallet</th><th scope="col">Endpoints, per call</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
</main>`,
  );
  app.get("/", (c) => c.html(index));
  // The server's bindings go along: a shop's unpaid limit reads the caller's socket from them.
  app.all("/:slug{[a-z0-9-]+}/*", (c) => forward(c.req.raw, c.req.param("slug"), c.env));
  app.all("/:slug{[a-z0-9-]+}", (c) => forward(c.req.raw, c.req.param("slug"), c.env));

  function forward(request: Request, slug: string, env: unknown) {
    const shop = apps.get(slug);
    if (!shop)
      return Response.json({ error: { code: "not_found", message: `no shop "${slug}"` } }, { status: 404 });
    const url = new URL(request.url);
    url.pathname = url.pathname.slice(slug.length + 1) || "/";
    return shop(new Request(url, request), env);
  }
  return app;
}
