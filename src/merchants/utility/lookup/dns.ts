import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { inspectDomain } from "./dns-engine.ts";
import { DNS_ERRORS, type DnsOptions } from "./dns-resolver.ts";
import { parseDomain } from "./domain-name.ts";

/** The domain, validated before any payment is asked for: a bad name is a 400, never charged. */
const DnsInput = z.object({
  domain: z
    .string()
    .min(1)
    .max(300)
    .transform((value, ctx) => {
      try {
        return parseDomain(value);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    })
    .describe("Domain or host name to inspect, e.g. `example.com` (IDNs accepted; no IP addresses)."),
});

const Dmarc = z.object({
  present: z.boolean(),
  record: z.string().nullable(),
  policy: z.enum(["none", "quarantine", "reject"]).nullable(),
  subdomain_policy: z.enum(["none", "quarantine", "reject"]).nullable(),
  pct: z.number().nullable(),
  rua: z.array(z.string()),
  found_at: z
    .string()
    .nullable()
    .describe("`_dmarc.<domain>`, or of the organizational domain when inherited."),
});

const DnsOutput = z.object({
  domain: z.string(),
  resolves: z.boolean().describe("The name has A/AAAA records or is a CNAME."),
  status: z.enum(["NOERROR", "NXDOMAIN"]).describe("NXDOMAIN: the name does not exist."),
  records: z.object({
    a: z.array(z.string()),
    aaaa: z.array(z.string()),
    cname: z.array(z.string()),
    mx: z.array(z.object({ exchange: z.string(), priority: z.number() })).describe("Sorted by priority."),
    ns: z.array(z.string()),
    txt: z.array(z.string()),
    soa: z
      .object({
        nsname: z.string(),
        hostmaster: z.string(),
        serial: z.number(),
        refresh: z.number(),
        retry: z.number(),
        expire: z.number(),
        minttl: z.number(),
      })
      .nullable(),
  }),
  email: z.object({
    mail_configured: z.boolean().describe("At least one MX other than the null MX."),
    null_mx: z.boolean().describe("The domain publishes the null MX (RFC 7505): it accepts no mail."),
    spf: z.object({
      present: z.boolean(),
      record: z.string().nullable(),
      multiple: z.boolean(),
      all: z.string().nullable(),
    }),
    dmarc: Dmarc,
    dkim: z.object({
      checked_selectors: z.array(z.string()),
      found_selectors: z.array(z.string()),
      unanswered_selectors: z.array(z.string()),
    }),
  }),
  errors: z
    .array(z.object({ type: z.string(), code: z.string() }))
    .describe("Record types that got no answer."),
});

/** `/api/dns` asking the resolvers `dns` names. */
export function dnsEndpoint(dns: DnsOptions = {}) {
  return defineEndpoint({
    method: "GET",
    path: "/api/dns",
    price: PRICES["/api/dns"],
    description:
      "DNS report for a domain (query `domain`): A, AAAA, CNAME, MX sorted by priority, NS, TXT and SOA records, plus mail authentication: SPF record, DMARC policy and DKIM keys probed at 20 common selectors. Non-existent domains answer status NXDOMAIN.",
    input: DnsInput,
    output: DnsOutput,
    example: {
      input: { domain: "example.com" },
      output: {
        domain: "example.com",
        resolves: true,
        status: "NOERROR",
        records: {
          a: ["93.184.215.14"],
          aaaa: [],
          cname: [],
          mx: [{ exchange: "", priority: 0 }],
          ns: ["a.iana-servers.net", "b.iana-servers.net"],
          txt: ["v=spf1 -all"],
          soa: {
            nsname: "ns.icann.org",
            hostmaster: "noc.dns.icann.org",
            serial: 2024081441,
            refresh: 7200,
            retry: 3600,
            expire: 1209600,
            minttl: 3600,
          },
        },
        email: {
          mail_configured: false,
          null_mx: true,
          spf: { present: true, record: "v=spf1 -all", multiple: false, all: "-all" },
          dmarc: {
            present: true,
            record: "v=DMARC1;p=reject;sp=reject;adkim=s;aspf=s",
            policy: "reject",
            subdomain_policy: "reject",
            pct: 100,
            rua: [],
            found_at: "_dmarc.example.com",
          },
          dkim: { checked_selectors: ["default", "google"], found_selectors: [], unanswered_selectors: [] },
        },
        errors: [],
      },
    },
    timeoutMs: 15_000,
    errors: DNS_ERRORS,
    handler: async (input, ctx) => inspectDomain(input.domain, dns, ctx.signal),
  });
}
