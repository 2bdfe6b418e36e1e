import { z } from "zod";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { DNS_ERRORS, type DnsOptions } from "./dns-resolver.ts";
import { verifyEmail } from "./email-engine.ts";

/**
 * `email` as in the comparable x402 service and most verification APIs. A malformed address is an answer
 * (`syntax.valid: false`, verdict undeliverable), not a 400: checking it is the service. Only an empty or
 * absurdly long value is refused before payment.
 */
const EmailInput = z.object({
  email: z
    .string()
    .min(1)
    .max(512)
    .describe("The e-mail address to check, e.g. `jane.doe+news@example.com`."),
});

const EmailOutput = z.object({
  email: z.string(),
  normalized: z
    .string()
    .nullable()
    .describe("Lower-case, plus tag removed; Gmail dots removed for gmail.com."),
  syntax: z.object({
    valid: z.boolean(),
    reason: z.string().nullable(),
    local_part: z.string().nullable(),
    domain: z.string().nullable(),
    quoted: z.boolean(),
  }),
  domain_check: z.object({
    domain: z.string().nullable(),
    exists: z.boolean().nullable(),
    mx_found: z.boolean(),
    mx: z.array(z.object({ exchange: z.string(), priority: z.number() })),
    implicit_mx: z.boolean().describe("No MX; the domain's A/AAAA address receives mail (RFC 5321 5.1)."),
    null_mx: z.boolean().describe("The domain declares it accepts no mail (RFC 7505)."),
    accepts_mail: z.boolean().nullable(),
  }),
  flags: z.object({
    disposable: z.boolean(),
    role_account: z.boolean(),
    free_provider: z.boolean(),
    plus_tag: z.string().nullable(),
  }),
  verdict: z.enum(["deliverable", "risky", "undeliverable", "unknown"]),
  reasons: z.array(z.string()),
});

/** `/api/email/verify` asking the resolvers `dns` names. */
export function emailVerifyEndpoint(dns: DnsOptions = {}) {
  return defineEndpoint({
    method: "GET",
    path: "/api/email/verify",
    price: PRICES["/api/email/verify"],
    description:
      "E-mail address check without sending mail (query `email`): RFC 5321 syntax, MX lookup with implicit-MX (A/AAAA) fallback and null-MX detection, disposable-domain, role-account and free-provider flags, plus-tag normalisation, and a verdict (deliverable, risky, undeliverable, unknown) with reasons. No SMTP mailbox probing.",
    input: EmailInput,
    output: EmailOutput,
    example: {
      input: { email: "Jane.Doe+news@gmail.com" },
      output: {
        email: "Jane.Doe+news@gmail.com",
        normalized: "janedoe@gmail.com",
        syntax: {
          valid: true,
          reason: null,
          local_part: "Jane.Doe+news",
          domain: "gmail.com",
          quoted: false,
        },
        domain_check: {
          domain: "gmail.com",
          exists: true,
          mx_found: true,
          mx: [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }],
          implicit_mx: false,
          null_mx: false,
          accepts_mail: true,
        },
        flags: { disposable: false, role_account: false, free_provider: true, plus_tag: "news" },
        verdict: "deliverable",
        reasons: [],
      },
    },
    timeoutMs: 15_000,
    errors: DNS_ERRORS,
    handler: async (input, ctx) => verifyEmail(input.email, dns, ctx.signal),
  });
}
