/**
 * What an agent should know to use the utility API well, beyond each operation's description: its OpenAPI
 * document's `info.x-guidance` and its `/llms.txt` open with it (src/merchant-kit/host-info.ts). The operator
 * may rewrite it (X402M_UTILITY_GUIDANCE, X402M_UTILITY_ALIAS_GUIDANCE).
 */

export const UTILITY_GUIDANCE =
  "A toolbox of small calls, each priced and paid on its own: web pages by URL (scrape to Markdown, summary, SEO metadata and alt-text audits, accessibility audit), network checks (ping, uptime report, DNS, e-mail verification, IP geolocation, time zone of a place), computation (calculator with 50 significant digits, colour contrast, data conversion, QR codes, image vectorizing, icons) and per-wallet storage. " +
  "Pick the one operation that answers the question; read its parameters in the OpenAPI document. " +
  "Storage (/api/store collections, /api/scratchpad) belongs to the paying wallet: pay from the same wallet to read what it wrote; GET /api/store and GET /api/scratchpad list what it holds. " +
  "Calls that fetch a URL reach public addresses (and only those the operator allows besides). A call that needs a provider the operator has not configured (language model, search, image model) answers 503 provider_not_configured and charges nothing.";

export const UTILITY_ALIAS_GUIDANCE =
  "Two operations of the utility API under a host of their own, with the same descriptions and prices: GET /api/scrape (a public web page as clean Markdown) and GET /api/geo (geolocation of a public IP address). Calls that fetch a URL reach public addresses (and only those the operator allows besides).";
