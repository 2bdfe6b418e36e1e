/**
 * What every page for people is drawn in: the HTML document with the pages' one stylesheet, the notice
 * banner and the licence footer.
 */
import { html, type Markup, nothing, trusted } from "../../common/html.ts";
import { SCREENS_PATH } from "../screens/index.ts";
import { CHART_COLORS } from "./chart.ts";

const CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff}
main,header,footer{max-width:60rem;margin:0 auto;padding:0 1rem}
header{padding-top:1.5rem}
h1{font-size:1.75rem;margin:.25rem 0;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid #d0d7de;padding-bottom:.25rem}
h3{font-size:1.05rem;margin:1.25rem 0 .25rem}
a{color:#0550ae}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.addr{overflow-wrap:anywhere;color:#57606a;margin:0}
code.addr{font-size:.8em}
.nav{margin:0;font-size:.9rem}
.notice{background:#fff8c5;border-bottom:3px solid #d4a72c;padding:.75rem 1rem;text-align:center;font-weight:600}
.state{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0;margin:.75rem 0}
.state li{border:1px solid #d0d7de;border-radius:1rem;padding:.1rem .75rem;font-size:.9rem}
.state .held{background:#ddf4ff;border-color:#54aeff}
.state .frozen{background:#dafbe1;border-color:#4ac26b}
.claim{font-size:1.2rem;border-left:4px solid ${CHART_COLORS.real_usd};background:#f6f8fa;padding:.75rem 1rem;margin:1.25rem 0}
.note{color:#57606a;font-size:.95rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
caption{text-align:left;color:#57606a;font-size:.9rem;padding-bottom:.25rem}
th,td{padding:.35rem .5rem;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}
th{font-weight:600;background:#f6f8fa}
tbody th{background:none;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td code{overflow-wrap:anywhere}
.empty{text-align:center;color:#57606a;padding:1rem}
figure{margin:.5rem 0}
.chart svg{display:block;min-width:22rem;max-width:46rem}
dl.figures{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;margin:.5rem 0}
dl.figures dt{color:#57606a}
dl.figures dd{margin:0;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;padding:.75rem;overflow-x:auto;user-select:all;white-space:pre-wrap;overflow-wrap:anywhere}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:baseline}
@media (max-width:40rem){body{font-size:15px}table{font-size:.875rem}th,td{padding:.3rem .25rem}h1{font-size:1.5rem}}
footer{margin-top:3rem;padding-bottom:2rem;border-top:1px solid #d0d7de;color:#57606a;font-size:.9rem}
`;

/** A whole HTML document around `body`, with the pages' one stylesheet inline. */
export function documentShell(title: string, body: Markup, head: Markup = nothing): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}<style>${trusted(CSS)}</style>
</head>
<body>
${body}
</body>
</html>
`.toString();
}

/** A banner over every page when the data is not the real chain's (the sample week, the devnet demo). */
export function noticeBanner(notice: string | undefined): Markup {
  if (!notice) return nothing;
  return html`<div class="notice" role="note">${notice}</div>`;
}

export function licenceFooter(license: string, extra: Markup = nothing): Markup {
  return html`<footer><p><a href="${SCREENS_PATH}">How the screens work</a>: every rule and threshold behind the real figures.</p><p>The reports and datasets are published under the <a rel="license" href="${license}">Creative Commons Attribution 4.0 International licence (CC BY 4.0)</a>: reuse them freely, naming x402-merchants as the source.${extra}</p></footer>`;
}
