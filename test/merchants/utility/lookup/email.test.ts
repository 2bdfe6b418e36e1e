import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDisposableDomain } from "../../../../src/merchants/utility/lookup/disposable.ts";
import { normalize, verifyEmail } from "../../../../src/merchants/utility/lookup/email-engine.ts";
import { checkSyntax } from "../../../../src/merchants/utility/lookup/email-syntax.ts";
import { type DnsFixture, startDnsFixture } from "./dns-fixture.ts";

let fixture: DnsFixture;
const dns = () => ({ servers: [fixture.server], timeoutMs: 300, tries: 1 });
beforeAll(async () => {
  fixture = await startDnsFixture();
});
afterAll(() => fixture?.close());

describe("checkSyntax", () => {
  it.each([
    "a@example.com",
    "first.last+tag@example.co.uk",
    "o'neil@example.com",
    '"john doe"@example.com',
    "x@bücher.de",
  ])("accepts %s", (address) => expect(checkSyntax(address).valid).toBe(true));
  it.each([
    "plain",
    "@example.com",
    "a@",
    "a..b@example.com",
    ".a@example.com",
    "a.@example.com",
    "a b@example.com",
    "a@localhost",
    "a@[192.0.2.1]",
    "a@1.2.3.4",
    "jörg@example.com",
    `${"a".repeat(65)}@example.com`,
    `a@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.${"e".repeat(63)}.com`,
    '"unclosed@example.com',
  ])("refuses %s", (address) => {
    const result = checkSyntax(address);
    expect(result.valid).toBe(false);
    expect(result.reason).toBeTruthy();
  });
});

describe("normalize and flags", () => {
  it("strips plus tags everywhere, dots only at Gmail", () => {
    expect(normalize("J.Doe+News", "gmail.com")).toEqual({
      normalized: "jdoe@gmail.com",
      base: "jdoe",
      tag: "news",
    });
    expect(normalize("J.Doe", "googlemail.com").normalized).toBe("jdoe@gmail.com");
    expect(normalize("J.Doe+x", "example.com").normalized).toBe("j.doe@example.com");
    expect(normalize("+x", "example.com").tag).toBeNull();
  });
  it("knows disposable domains and their subdomains from the package, not ordinary ones", () => {
    expect(isDisposableDomain("mailinator.com")).toBe(true);
    expect(isDisposableDomain("example.com")).toBe(false);
    expect(isDisposableDomain("gmail.com")).toBe(false);
  });
});

describe("verifyEmail against a DNS server on 127.0.0.1", () => {
  it("deliverable: MX with addresses", async () => {
    const r = await verifyEmail("Jane.Doe+news@gmail.com", dns());
    expect(r).toMatchObject({
      normalized: "janedoe@gmail.com",
      verdict: "deliverable",
      reasons: [],
      flags: { free_provider: true, disposable: false, role_account: false, plus_tag: "news" },
      domain_check: { exists: true, mx_found: true, accepts_mail: true },
    });
  });
  it("risky: role account, disposable domain, implicit MX", async () => {
    const role = await verifyEmail("support@example.com", dns());
    expect(role).toMatchObject({
      verdict: "risky",
      reasons: ["role_account"],
      flags: { role_account: true },
    });
    expect(role.domain_check.mx.map((m) => m.priority)).toEqual([10, 20]);
    const disposable = await verifyEmail("x@mailinator.com", dns());
    expect(disposable).toMatchObject({ verdict: "risky", reasons: ["disposable_domain"] });
    const implicit = await verifyEmail("x@implicit.example.org", dns());
    expect(implicit).toMatchObject({
      verdict: "risky",
      domain_check: { implicit_mx: true, mx_found: false },
    });
  });
  it("undeliverable: bad syntax, no domain, null MX, no server, dead MX", async () => {
    expect(await verifyEmail("a..b@example.com", dns())).toMatchObject({
      verdict: "undeliverable",
      reasons: ["invalid_syntax"],
    });
    expect(await verifyEmail("a@nope.example.org", dns())).toMatchObject({
      verdict: "undeliverable",
      reasons: ["domain_not_found"],
    });
    expect(await verifyEmail("a@nullmx.example.org", dns())).toMatchObject({
      verdict: "undeliverable",
      reasons: ["null_mx"],
    });
    expect(await verifyEmail("a@nomail.example.org", dns())).toMatchObject({
      verdict: "undeliverable",
      reasons: ["no_mail_server"],
    });
    expect(await verifyEmail("a@deadmx.example.org", dns())).toMatchObject({
      verdict: "undeliverable",
      reasons: ["mx_hosts_unresolvable"],
    });
  });
  it("a DNS timeout is an upstream error, not a verdict", async () => {
    await expect(verifyEmail("a@slow.example.net", dns())).rejects.toMatchObject({ status: 504 });
  });
});
