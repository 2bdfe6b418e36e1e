/**
 * The demo's small shops on one port, each under its slug (`/fortune/...`) with its own wallet: every
 * shop is a full merchant host (`merchantApp`: x402 routes, OpenAPI, reference page, llms.txt), reached
 * with the slug taken off the path. `/` lists them; `/openapi.json` and `/llms.txt` hold every shop's
 * operations (agents' discovery reads a host's documents at its origin only), beside the icon.
 */
import { Hono } from "hono";
import { html } from "../../common/html.ts";
import type { Merchant } from "../../merchant-kit/index.ts";
import {
  combinedOpenApi,
  faviconResponse,
  type HostInfo,
  hostInfo,
  hostInfoSettings,
  llmsTxtOfHosts,
  type MerchantAppOptions,
  merchantApp,
  openApiDocument,
  payingGuidance,
} from "../../merchant-kit/index.ts";
import { documentShell, noticeBanner } from "../../reports/index.ts";

const TITLE = "Demo shops";
const SUMMARY =
  "Small paid APIs of the devnet demo, each with its own wallet, under its own path: paid per call through x402, no account and no key.";

/** The host's base URL: a shop's public URL is the host's and its slug. */
function hostUrl(merchant: Merchant): string {
  const suffix = `/${merchant.name}`;
  if (!merchant.publicUrl.endsWith(suffix))
    throw new Error(`the shop ${merchant.name} is not served under its slug: ${merchant.publicUrl}`);
  return merchant.publicUrl.slice(0, -suffix.length);
}

/** The host's documents for agents: every shop's operations, and each shop's documents and prices. */
function agentDocuments(shops: readonly { merchant: Merchant }[], options: MerchantAppOptions) {
  const first = shops[0];
  if (!first) return null;
  const url = hostUrl(first.merchant);
  const parts = shops.map(({ merchant }) => {
    const info = hostInfo(
      merchant,
      options.payments,
      hostInfoSettings(options.services.config, merchant.name),
    );
    return { merchant, info, doc: openApiDocument(merchant, options.payments, info) };
  });
  const paying = payingGuidance({ endpoints: shops.flatMap((s) => s.merchant.endpoints) }, options.payments);
  const guidance = [
    `${SUMMARY} Each shop is one or two small calls; pick the shop by what it does (the OpenAPI document lists every operation).`,
    paying,
    `Documents: ${url}/openapi.json (every shop's operations, their schemas and prices), ${url}/llms.txt (each shop's documents, MCP endpoint and prices); each shop also serves its own at ${url}/<shop>/openapi.json, ${url}/<shop>/llms.txt and ${url}/<shop>/mcp.`,
  ].join("\n\n");
  // The operator's contact, as every shop's; without a URL, the host's index of the shops.
  const { email, url: contactUrl } = options.services.config.contact;
  const info: HostInfo = {
    contact: { ...(email ? { email } : {}), url: contactUrl ?? `${url}/` },
    guidance,
    paying,
  };
  return {
    openapi: combinedOpenApi(
      { title: TITLE, description: SUMMARY, url, info },
      parts.map(({ merchant, doc }) => ({ prefix: merchant.name, doc })),
    ),
    llms: llmsTxtOfHosts({ title: TITLE, summary: SUMMARY, url, guidance }, parts),
  };
}

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
  const documents = agentDocuments(shops, options);
  if (documents) {
    app.get("/openapi.json", (c) => c.json(documents.openapi));
    app.get("/llms.txt", (c) => c.text(documents.llms));
  }
  app.get("/favicon.ico", () => faviconResponse("ico"));
  app.get("/favicon.svg", () => faviconResponse("svg"));
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
