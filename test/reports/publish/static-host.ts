/**
 * A static host as Netlify and Cloudflare Pages behave, reduced to what a published site relies on: a URL is
 * the file at its path, or its directory's `index.html`; the site's `_redirects` rewrites (status 200, with
 * `:name` placeholders) and `_headers` rules (`*` matching within the path) apply; the content type
 * otherwise comes from the file's extension. The query string is ignored, as static hosts do.
 */
import fs from "node:fs";
import path from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".csv": "text/csv",
  ".gz": "application/gzip",
};

export interface StaticAnswer {
  status: number;
  contentType: string;
  headers: Record<string, string>;
  body: Buffer;
}

export function staticHost(root: string): (url: string) => StaticAnswer {
  const rewrites = read(root, "_redirects")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const [from, to, status] = l.trim().split(/\s+/) as [string, string, string];
      if (status !== "200") throw new Error(`only rewrites are expected in _redirects: ${l}`);
      const names: string[] = [];
      const pattern = from.replace(/:([a-z]+)/g, (_, name: string) => {
        names.push(name);
        return "([^/]+)";
      });
      return { match: new RegExp(`^${pattern}$`), names, to };
    });
  const rules: { match: RegExp; headers: Record<string, string> }[] = [];
  for (const line of read(root, "_headers").split("\n")) {
    if (line.trim() === "") continue;
    if (!line.startsWith(" ")) {
      rules.push({
        match: new RegExp(`^${line.trim().replaceAll(".", "\\.").replaceAll("*", ".*")}$`),
        headers: {},
      });
      continue;
    }
    const [name, ...value] = line.trim().split(":");
    (rules.at(-1) as (typeof rules)[number]).headers[(name as string).toLowerCase()] = value.join(":").trim();
  }

  return (url) => {
    let urlPath = decodeURIComponent(url.split("?")[0] as string);
    for (const r of rewrites) {
      const m = r.match.exec(urlPath);
      if (m) urlPath = r.names.reduce((to, name, i) => to.replace(`:${name}`, m[i + 1] as string), r.to);
    }
    const direct = path.join(root, urlPath);
    const file =
      fs.existsSync(direct) && fs.statSync(direct).isFile() ? direct : path.join(direct, "index.html");
    if (!file.startsWith(root) || !fs.existsSync(file)) {
      return { status: 404, contentType: "text/plain", headers: {}, body: Buffer.from("not found") };
    }
    const headers: Record<string, string> = {
      "content-type": TYPES[path.extname(file)] ?? "application/octet-stream",
    };
    for (const rule of rules) if (rule.match.test(urlPath)) Object.assign(headers, rule.headers);
    return {
      status: 200,
      contentType: headers["content-type"] as string,
      headers,
      body: fs.readFileSync(file),
    };
  };
}

function read(root: string, name: string): string {
  return fs.readFileSync(path.join(root, name), "utf8");
}
