import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSafeFetch,
  FetchError,
  type FetchErrorCode,
  fetchText,
  safeFetch,
} from "../../../src/merchant-kit/fetch/index.ts";
import {
  echo,
  type FixtureServer,
  fakeLookup,
  huge,
  redirect,
  slow,
  startFixtureServer,
  text,
} from "../../helpers/fixtures/index.ts";

/** The door for the fixtures: only this address, nothing else private. */
const ALLOW_FIXTURE = { allowAddresses: ["127.0.0.1"] };

async function failure(promise: Promise<unknown>): Promise<FetchError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof FetchError)) throw new Error(`expected a FetchError, got ${String(error)}`);
  return error;
}

async function expectCode(promise: Promise<unknown>, code: FetchErrorCode): Promise<FetchError> {
  const error = await failure(promise);
  expect(error.code, error.message).toBe(code);
  return error;
}

let server: FixtureServer;
/** A second server on 127.0.0.2 and the same port: it must never be reached. */
let secret: FixtureServer;

beforeAll(async () => {
  server = await startFixtureServer({
    routes: {
      "/": text("hello"),
      "/echo": echo(),
      "/redirect/a": redirect("/redirect/b", 301),
      "/redirect/b": redirect("final"),
      "/redirect/final": text("arrived"),
      "/loop": redirect("/loop"),
      "/post/303": redirect("/echo", 303),
      "/post/307": redirect("/echo", 307),
      "/huge": huge(6 * 1024 * 1024),
      "/huge/chunked": huge(6 * 1024 * 1024, { declareLength: false }),
      "/small": huge(2_000),
      "/slow": slow(5_000),
      "/trickle": slow(50, { trickle: true }),
      "/latin1": (_request, res) => {
        res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" });
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      },
    },
  });
  secret = await startFixtureServer({
    host: "127.0.0.2",
    port: server.port,
    routes: { "/": text("secret") },
  });
});
afterAll(async () => {
  await server?.close();
  await secret?.close();
});

const at = (path: string, base = server.url) => new URL(path, base).href;

describe("the allow-list is the only door to loopback", () => {
  it("fetches an allowed fixture and reports where it connected", async () => {
    const { response, url, redirects, address } = await safeFetch(server.url, ALLOW_FIXTURE);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("hello");
    expect(url).toBe(server.url);
    expect(redirects).toEqual([]);
    expect(address).toBe("127.0.0.1");
  });

  it("refuses 127.0.0.1 without it, before connecting", async () => {
    const before = server.requests.length;
    const error = await expectCode(safeFetch(server.url), "ssrf_blocked");
    expect(error.status).toBe(400);
    expect(error.message).toContain("loopback");
    expect(server.requests.length).toBe(before);
  });

  it("refuses localhost without it (system resolver)", async () => {
    await expectCode(safeFetch(`http://localhost:${server.port}/`), "ssrf_blocked");
  });

  it("refuses a public-looking name that resolves to 127.0.0.1 without it, and serves it with it", async () => {
    const dns = fakeLookup({ "innocent.example": ["127.0.0.1"] });
    const url = `http://innocent.example:${server.port}/echo`;
    await expectCode(safeFetch(url, { lookup: dns.lookup }), "ssrf_blocked");
    const { response } = await safeFetch(url, { lookup: dns.lookup, ...ALLOW_FIXTURE });
    const echoed = (await response.json()) as { headers: Record<string, string> };
    expect(echoed.headers.host).toBe(`innocent.example:${server.port}`);
  });

  it("refuses a name with any refused address among public ones", async () => {
    const dns = fakeLookup({ "mixed.example": ["93.184.215.14", "127.0.0.1"] });
    const error = await expectCode(
      safeFetch("http://mixed.example/", { lookup: dns.lookup }),
      "ssrf_blocked",
    );
    expect(error.message).toContain("127.0.0.1");
  });

  it.each([
    "http://0x7f.1:PORT/",
    "http://2130706433:PORT/",
    "http://127.1:PORT/",
    "http://0177.0.0.1:PORT/",
    "http://[::1]:PORT/",
    "http://[::ffff:127.0.0.1]:PORT/",
    "http://[::ffff:7f00:1]:PORT/",
    "http://[::127.0.0.1]:PORT/",
    "http://0.0.0.0:PORT/",
    "http://[::]:PORT/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://100.100.100.200/",
    "http://[64:ff9b::7f00:1]/",
  ])("refuses the literal %s without a lookup", async (template) => {
    const dns = fakeLookup({});
    await expectCode(
      safeFetch(template.replace("PORT", String(server.port)), { lookup: dns.lookup }),
      "ssrf_blocked",
    );
    expect(dns.calls).toEqual([]);
  });

  it("does not widen 127.0.0.1 to its IPv6-mapped form", async () => {
    await expectCode(safeFetch(`http://[::ffff:127.0.0.1]:${server.port}/`, ALLOW_FIXTURE), "ssrf_blocked");
  });

  it("refuses cloud metadata host names whatever they resolve to", async () => {
    const dns = fakeLookup({ "metadata.google.internal": ["127.0.0.1"] });
    const policy = { lookup: dns.lookup, allowAddress: () => true };
    await expectCode(
      safeFetch("http://metadata.google.internal./computeMetadata/v1/", policy),
      "ssrf_blocked",
    );
    expect(dns.calls).toEqual([]);
  });
});

describe("bad URLs", () => {
  it.each([
    "ftp://example.com/file",
    "file:///etc/passwd",
    "gopher://example.com/",
    "data:text/plain,hello",
    "javascript:alert(1)",
    "ws://example.com/",
    "not a url",
    "/relative/path",
    "http://user:secret@example.com/",
    "http://example.com:25/",
  ])("refuses %s", async (url) => {
    const dns = fakeLookup({});
    const error = await expectCode(safeFetch(url, { lookup: dns.lookup }), "bad_url");
    expect(error.status).toBe(400);
    expect(dns.calls).toEqual([]);
  });

  it("says when a name does not resolve", async () => {
    await expectCode(safeFetch("http://nowhere.example/", { lookup: fakeLookup({}).lookup }), "dns_failed");
  });

  it("says when nothing listens", async () => {
    const gone = await startFixtureServer();
    await gone.close();
    await expectCode(safeFetch(gone.url, ALLOW_FIXTURE), "fetch_failed");
  });
});

describe("redirects", () => {
  it("follows them itself, relative locations included, and lists every hop", async () => {
    const { response, url, redirects } = await safeFetch(at("/redirect/a"), ALLOW_FIXTURE);
    expect(await response.text()).toBe("arrived");
    expect(url).toBe(at("/redirect/final"));
    expect(redirects).toEqual([
      { url: at("/redirect/a"), status: 301, location: at("/redirect/b") },
      { url: at("/redirect/b"), status: 302, location: at("/redirect/final") },
    ]);
  });

  it("returns the 3xx instead when following is off (ping reports redirects)", async () => {
    const fetchUrl = createSafeFetch({ ...ALLOW_FIXTURE, followRedirects: false });
    const { response, url, redirects } = await fetchUrl(at("/redirect/a"));
    expect(response.status).toBe(301);
    expect(response.headers.get("location")).toBe("/redirect/b");
    expect(url).toBe(at("/redirect/a"));
    expect(redirects).toEqual([]);
  });

  it.each([
    ["127.0.0.2 (another loopback address)", "http://127.0.0.2:PORT/"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/"],
    ["IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:PORT/"],
    ["IPv6 loopback", "http://[::1]:PORT/"],
    ["a private name", "http://intranet.example/"],
    ["a metadata name", "http://metadata.google.internal/"],
  ])("re-checks every hop: refuses a redirect to %s", async (_name, template) => {
    const dns = fakeLookup({ "intranet.example": ["10.0.0.7"] });
    const target = template.replace("PORT", String(server.port));
    const route = `/to/${encodeURIComponent(target)}`;
    server.route(route, redirect(target));
    const before = secret.requests.length;
    await expectCode(safeFetch(at(route), { ...ALLOW_FIXTURE, lookup: dns.lookup }), "ssrf_blocked");
    expect(secret.requests.length).toBe(before);
  });

  it("refuses a redirect to another scheme", async () => {
    server.route("/to-file", redirect("file:///etc/passwd"));
    await expectCode(safeFetch(at("/to-file"), ALLOW_FIXTURE), "bad_url");
  });

  it("stops after maxRedirects (default 5)", async () => {
    const before = server.requests.length;
    const error = await expectCode(safeFetch(at("/loop"), ALLOW_FIXTURE), "too_many_redirects");
    expect(error.status).toBe(422);
    expect(server.requests.length - before).toBe(6);
    await expectCode(
      safeFetch(at("/redirect/a"), { ...ALLOW_FIXTURE, maxRedirects: 1 }),
      "too_many_redirects",
    );
    const fetchUrl = createSafeFetch(ALLOW_FIXTURE);
    await expectCode(fetchUrl(at("/redirect/a"), { maxRedirects: 0 }), "too_many_redirects");
  });

  it("turns POST into GET on 303 and keeps it on 307", async () => {
    const fetchUrl = createSafeFetch(ALLOW_FIXTURE);
    const init = { method: "POST", body: "payload", headers: { "content-type": "text/plain" } };
    const after303 = (await (await fetchUrl(at("/post/303"), init)).response.json()) as Record<
      string,
      unknown
    >;
    expect(after303).toMatchObject({ method: "GET", body: "" });
    const after307 = (await (await fetchUrl(at("/post/307"), init)).response.json()) as Record<
      string,
      unknown
    >;
    expect(after307).toMatchObject({ method: "POST", body: "payload" });
  });

  it("drops credentials headers when a redirect leaves the origin", async () => {
    const dns = fakeLookup({ "other.example": ["127.0.0.1"] });
    server.route("/cross", redirect(`http://other.example:${server.port}/echo`));
    const { response } = await safeFetch(
      at("/cross"),
      { ...ALLOW_FIXTURE, lookup: dns.lookup },
      { headers: { authorization: "Bearer secret", "x-kept": "yes" } },
    );
    const echoed = (await response.json()) as { headers: Record<string, string> };
    expect(echoed.headers.authorization).toBeUndefined();
    expect(echoed.headers["x-kept"]).toBe("yes");
  });
});

describe("DNS rebinding", () => {
  it("connects to the address it checked: one lookup, no second one at connect time", async () => {
    // The attacker's name answers an acceptable address first (127.0.0.1 plays the public one
    // here) and the internal 127.0.0.2 afterwards. A second lookup would reach `secret`.
    const dns = fakeLookup({ "rebind.example": [["127.0.0.1"], ["127.0.0.2"]] });
    const fetchUrl = createSafeFetch({ ...ALLOW_FIXTURE, lookup: dns.lookup });
    const served = server.requests.length;
    const { response, address } = await fetchUrl(`http://rebind.example:${server.port}/`);
    expect(await response.text()).toBe("hello");
    expect(address).toBe("127.0.0.1");
    expect(dns.calls).toEqual(["rebind.example"]);
    expect(server.requests.length - served).toBe(1);
    expect(secret.requests.length).toBe(0);
    // The next call asks again and is refused on the rebound answer, still without reaching it.
    await expectCode(fetchUrl(`http://rebind.example:${server.port}/`), "ssrf_blocked");
    expect(secret.requests.length).toBe(0);
  });

  it("keeps a host's first answer for the rest of its redirect chain", async () => {
    const dns = fakeLookup({ "rebind2.example": [["127.0.0.1"], ["127.0.0.2"]] });
    server.route("/bounce", redirect(`http://rebind2.example:${server.port}/`));
    const { response } = await safeFetch(`http://rebind2.example:${server.port}/bounce`, {
      ...ALLOW_FIXTURE,
      lookup: dns.lookup,
    });
    expect(await response.text()).toBe("hello");
    expect(dns.calls).toEqual(["rebind2.example"]);
    expect(secret.requests.length).toBe(0);
  });
});

describe("limits", () => {
  it("refuses a body over the default 5 MB when read (declared length)", async () => {
    const { response } = await safeFetch(at("/huge"), ALLOW_FIXTURE);
    expect(response.status).toBe(200);
    await expectCode(response.arrayBuffer(), "too_large");
  });

  it("aborts a chunked body past the limit while streaming", async () => {
    const { response } = await safeFetch(at("/huge/chunked"), ALLOW_FIXTURE);
    await expectCode(response.arrayBuffer(), "too_large");
    await expectCode(fetchText(at("/small"), ALLOW_FIXTURE, { maxBytes: 1_999 }), "too_large");
    expect((await fetchText(at("/small"), ALLOW_FIXTURE, { maxBytes: 2_000 })).body.length).toBe(2_000);
  });

  it("stops downloading at the cap instead of reading everything and discarding it", async () => {
    const ended = new Promise<{ sent: number; complete: boolean }>((resolve) => {
      server.route(
        "/endless",
        huge(256 * 1024 * 1024, {
          declareLength: false,
          onEnd: (sent, complete) => resolve({ sent, complete }),
        }),
      );
    });
    const { response } = await safeFetch(at("/endless"), { ...ALLOW_FIXTURE, maxBytes: 1024 * 1024 });
    await expectCode(response.arrayBuffer(), "too_large");
    const { sent, complete } = await ended;
    expect(complete).toBe(false);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("counts decompressed bytes, so a small gzip bomb is stopped too", async () => {
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024));
    server.route("/gzip", (_request, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(bomb);
    });
    expect(bomb.length).toBeLessThan(64 * 1024);
    const { response } = await safeFetch(at("/gzip"), { ...ALLOW_FIXTURE, maxBytes: 1024 * 1024 });
    await expectCode(response.arrayBuffer(), "too_large");
  });

  it("times out waiting for headers", async () => {
    const started = Date.now();
    await expectCode(safeFetch(at("/slow"), { ...ALLOW_FIXTURE, timeoutMs: 200 }), "timeout");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("times out on a body that never ends: the limit is total time", async () => {
    const { response } = await safeFetch(at("/trickle"), { ...ALLOW_FIXTURE, timeoutMs: 300 });
    await expectCode(response.text(), "timeout");
  });

  it("times out on a resolver that never answers", async () => {
    const never = () => new Promise<never>(() => {});
    await expectCode(safeFetch("http://stuck.example/", { lookup: never, timeoutMs: 100 }), "timeout");
  });

  it("rethrows the caller's own abort reason", async () => {
    const controller = new AbortController();
    const reason = new Error("caller gave up");
    setTimeout(() => controller.abort(reason), 50);
    const caught = await safeFetch(at("/slow"), ALLOW_FIXTURE, { signal: controller.signal }).catch((e) => e);
    expect(caught).toBe(reason);
  });
});

describe("fetchText", () => {
  it("returns the final URL, status, headers, decoded body and redirects", async () => {
    const page = await fetchText(at("/redirect/a"), ALLOW_FIXTURE);
    expect(page).toMatchObject({ url: at("/redirect/final"), status: 200, body: "arrived" });
    expect(page.redirects.map((hop) => hop.status)).toEqual([301, 302]);
    expect(page.headers.get("content-type")).toContain("text/plain");
  });

  it("decodes the charset the server declares", async () => {
    expect((await fetchText(at("/latin1"), ALLOW_FIXTURE)).body).toBe("café");
  });

  it("returns error statuses as answers", async () => {
    expect(await fetchText(at("/missing"), ALLOW_FIXTURE)).toMatchObject({ status: 404, body: "not found" });
  });
});
