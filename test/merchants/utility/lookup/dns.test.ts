import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectDomain } from "../../../../src/merchants/utility/lookup/dns-engine.ts";
import { parseDomain } from "../../../../src/merchants/utility/lookup/domain-name.ts";
import { readDmarc, readSpf } from "../../../../src/merchants/utility/lookup/mail-auth.ts";
import { type DnsFixture, startDnsFixture } from "./dns-fixture.ts";

let fixture: DnsFixture;
const opts = () => ({ servers: [fixture.server], timeoutMs: 300, tries: 1, dkimBudgetMs: 1000 });
beforeAll(async () => {
  fixture = await startDnsFixture();
});
afterAll(() => fixture?.close());

describe("parseDomain", () => {
  it("accepts public names, normalises case, trailing dot and IDNs", () => {
    expect(parseDomain("Example.COM.")).toEqual({ hostname: "example.com", registrable: "example.com" });
    expect(parseDomain("a.b.example.co.uk").registrable).toBe("example.co.uk");
    expect(parseDomain("bücher.de").hostname).toBe("xn--bcher-kva.de");
  });
  it.each([
    "1.2.3.4",
    "::1",
    "localhost",
    "com",
    "co.uk",
    "foo.internal",
    "x.local",
    "-bad.com",
    "a..com",
    "a_b.com",
    `${"a".repeat(64)}.com`,
  ])("refuses %s", (name) => expect(() => parseDomain(name)).toThrow());
});

describe("mail-auth parsing", () => {
  it("reads SPF and DMARC", () => {
    expect(readSpf(["x", "v=spf1 mx -all"])).toEqual({
      present: true,
      record: "v=spf1 mx -all",
      multiple: false,
      all: "-all",
    });
    expect(readSpf(["v=spf1 a", "v=spf1 mx"]).multiple).toBe(true);
    expect(readDmarc(["v=DMARC1; p=bogus"], "_dmarc.x.com")?.policy).toBeNull();
    expect(readDmarc(["v=DMARC1; p=none", "v=DMARC1; p=reject"], "_dmarc.x.com")).toBeNull();
  });
});

describe("inspectDomain against a DNS server on 127.0.0.1", () => {
  it("reports records, sorted MX, SPF, DMARC and DKIM", async () => {
    const report = await inspectDomain(parseDomain("example.com"), opts());
    expect(report.status).toBe("NOERROR");
    expect(report.resolves).toBe(true);
    expect(report.records.a).toEqual(["93.184.215.14"]);
    expect(report.records.aaaa).toEqual(["2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
    expect(report.records.mx).toEqual([
      { exchange: "mx1.example.com", priority: 10 },
      { exchange: "mx2.example.com", priority: 20 },
    ]);
    expect(report.records.ns).toEqual(["a.ns.example.com", "b.ns.example.com"]);
    expect(report.records.soa).toMatchObject({ nsname: "a.ns.example.com", serial: 2026112101 });
    expect(report.email.spf).toMatchObject({ present: true, all: "~all" });
    expect(report.email.dmarc).toMatchObject({
      policy: "quarantine",
      subdomain_policy: "reject",
      pct: 50,
      found_at: "_dmarc.example.com",
    });
    expect(report.email.dkim.found_selectors).toEqual(["google", "selector1"]);
    expect(report.email.mail_configured).toBe(true);
    expect(report.errors).toEqual([]);
  });
  it("inherits DMARC from the organizational domain and reports a CNAME", async () => {
    const sub = await inspectDomain(parseDomain("sub.example.com"), opts());
    expect(sub.email.dmarc.found_at).toBe("_dmarc.example.com");
    const www = await inspectDomain(parseDomain("www.example.com"), opts());
    expect(www.records.cname).toEqual(["example.com"]);
    expect(www.resolves).toBe(true);
  });
  it("answers NXDOMAIN for a missing name and null MX", async () => {
    const missing = await inspectDomain(parseDomain("nope.example.org"), opts());
    expect(missing).toMatchObject({ status: "NXDOMAIN", resolves: false });
    const nullMx = await inspectDomain(parseDomain("nullmx.example.org"), opts());
    expect(nullMx.email).toMatchObject({ null_mx: true, mail_configured: false });
  });
  it("is an upstream error (not charged) when the server does not answer or fails", async () => {
    await expect(inspectDomain(parseDomain("slow.example.net"), opts())).rejects.toMatchObject({
      status: 504,
      code: "dns_timeout",
    });
    await expect(inspectDomain(parseDomain("broken.example.net"), opts())).rejects.toMatchObject({
      status: 502,
      code: "dns_failed",
    });
  });
});
