import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FetchError, safeFetch } from "../../../src/merchant-kit/fetch/index.ts";
import {
  type FixtureCertificate,
  type FixtureServer,
  fakeLookup,
  fixtureCertificate,
  startFixtureServer,
} from "../../helpers/fixtures/index.ts";

let certificate: FixtureCertificate;
let server: FixtureServer;
let servername: string | undefined;

beforeAll(async () => {
  certificate = await fixtureCertificate(["fixture.test"]);
  server = await startFixtureServer({
    tls: certificate,
    routes: {
      "/": (request, res, req) => {
        servername = (req.socket as import("node:tls").TLSSocket).servername || undefined;
        res.writeHead(200, { "content-type": "text/plain" }).end(`host=${request.headers.host}`);
      },
    },
  });
});
afterAll(() => server?.close());

describe("HTTPS to a pinned address", () => {
  const dns = fakeLookup({ "fixture.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });

  it("connects to the vetted IP while SNI, Host and the certificate check use the name", async () => {
    const url = `https://fixture.test:${server.port}/`;
    const { response, address } = await safeFetch(url, {
      lookup: dns.lookup,
      allowAddresses: ["127.0.0.1"],
      ca: certificate.cert,
    });
    expect(await response.text()).toBe(`host=fixture.test:${server.port}`);
    expect(servername).toBe("fixture.test");
    expect(address).toBe("127.0.0.1");
  });

  it("refuses an untrusted certificate", async () => {
    const error = await safeFetch(`https://fixture.test:${server.port}/`, {
      lookup: dns.lookup,
      allowAddresses: ["127.0.0.1"],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).code).toBe("fetch_failed");
  });

  it("refuses a certificate for another name than the URL's, although the IP is the same", async () => {
    const error = await safeFetch(`https://other.test:${server.port}/`, {
      lookup: dns.lookup,
      allowAddresses: ["127.0.0.1"],
      ca: certificate.cert,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).code).toBe("fetch_failed");
    expect((error as FetchError).message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|altname/i);
  });
});
