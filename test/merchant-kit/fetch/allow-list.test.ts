/**
 * The operator's allow-list (`X402M_FETCH_ALLOW`): host names, addresses and CIDR ranges open exactly
 * what they name, and nothing else; cloud metadata names stay refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowListPolicy, FetchError, safeFetch } from "../../../src/merchant-kit/fetch/index.ts";
import { type FixtureServer, fakeLookup, startFixtureServer, text } from "../../helpers/fixtures/index.ts";

let server: FixtureServer;
beforeAll(async () => {
  server = await startFixtureServer({ routes: { "/": text("internal") } });
});
afterAll(() => server?.close());

const codeOf = (work: Promise<unknown>) =>
  work.then(
    () => "fetched",
    (error: unknown) => (error instanceof FetchError ? error.code : String(error)),
  );

describe("the fetch allow-list", () => {
  it("sorts entries into addresses and host names, and refuses what is neither", () => {
    expect(allowListPolicy(["127.0.0.1", "10.0.0.0/8", "::1", "Wiki.Internal", "localhost"])).toEqual({
      allowAddresses: ["127.0.0.1", "10.0.0.0/8", "::1"],
      allowHosts: ["wiki.internal", "localhost"],
    });
    expect(() => allowListPolicy(["10.0.0.0/99"])).toThrow(/10\.0\.0\.0\/99/);
    expect(() => allowListPolicy(["http://x"])).toThrow(
      /neither an IP address, a CIDR range nor a host name/,
    );
    expect(() => allowListPolicy(["a b"])).toThrow(/"a b"/);
  });

  it("opens a listed host name whatever it resolves to, and only that name", async () => {
    const { lookup } = fakeLookup({ "wiki.internal": ["127.0.0.1"], "other.internal": ["127.0.0.1"] });
    const policy = { ...allowListPolicy(["wiki.internal"]), lookup };
    const at = (host: string) => `http://${host}:${server.port}/`;
    const { response } = await safeFetch(at("wiki.internal"), policy);
    expect(await response.text()).toBe("internal");
    expect(await codeOf(safeFetch(at("other.internal"), policy))).toBe("ssrf_blocked");
    // The address itself is not opened by the name.
    expect(await codeOf(safeFetch(at("127.0.0.1"), policy))).toBe("ssrf_blocked");
    // Metadata names are refused even when listed.
    const metadata = { ...allowListPolicy(["metadata.google.internal"]), lookup };
    expect(await codeOf(safeFetch("http://metadata.google.internal/", metadata))).toBe("ssrf_blocked");
  });

  it("opens a listed range, and nothing outside it", async () => {
    const inside = allowListPolicy(["127.0.0.0/30"]);
    expect(await (await safeFetch(server.url, inside)).response.text()).toBe("internal");
    const outside = allowListPolicy(["127.0.0.4/30"]);
    expect(await codeOf(safeFetch(server.url, outside))).toBe("ssrf_blocked");
  });
});
