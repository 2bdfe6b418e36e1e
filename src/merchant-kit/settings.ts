/**
 * The merchant kit's part of the configuration: how the hosts are paid (payments/settings.ts) and run
 * payment channels (channels/settings.ts), who runs them, and each merchant host's own wallet, address,
 * port and guidance. It is all a handler may read of
 * the configuration (`MerchantServices.config`): a merchant's own settings reach it when it is built.
 */
import { z } from "zod";
import { SOLANA_ADDRESS } from "../chain/solana/constants.ts";
import { MERCHANT_HOSTS, merchantEnvPrefix } from "../config/ports.ts";
import { type Section, settingIn } from "../config/section.ts";
import { BaseUrl, Port } from "../config/values.ts";
import {
  AUTHORIZER_KEY,
  ChannelSettingsSchema,
  channelsSetting,
  readAuthorizerKey,
  readChannels,
} from "./channels/settings.ts";
import {
  BUILDER_CODE_PATTERN,
  defaultBuilderCode,
  NO_BUILDER_CODE,
  readBuilderCode,
} from "./payments/extensions/builder-code.ts";
import {
  PaymentIdSettingsSchema,
  paymentIdsSetting,
  readPaymentIds,
} from "./payments/extensions/payment-id-settings.ts";
import { RECEIPT_KEY, readReceiptKey } from "./payments/receipts/key.ts";
import { PaymentsSchema, paymentsSetting, readPayments } from "./payments/settings.ts";

/**
 * The longest guidance paragraph a host may be given: with what the kit adds, the whole stays under the
 * 4,000 characters agents' discovery tools read inline (`@agentcash/discovery`'s L4_GUIDANCE_TOO_LONG).
 */
export const MAX_GUIDANCE_CHARS = 2000;

const MerchantKitSchema = z.object({
  /** How the merchant APIs are paid: network, token and facilitator. */
  payments: PaymentsSchema,
  /** Payment channels (batch-settlement): offered or not, and when they are claimed and settled. */
  channels: ChannelSettingsSchema,
  /** Retries charged once (the `payment-identifier` extension): where an id is required, how long answers are kept. */
  paymentIds: PaymentIdSettingsSchema,
  /**
   * Who runs the merchant hosts, in each one's OpenAPI document (`info.contact`): registries and agent
   * platforms reach the operator there, and some verify a host's ownership by its email
   * (src/merchant-kit/host-info.ts). Null: no email, and each host's reference page as its URL.
   */
  contact: z.object({
    email: z.email("an email address").nullable(),
    url: z.url({ protocol: /^https?$/ }).nullable(),
  }),
  /** Per merchant host: who is paid, where buyers reach it, which port it listens on. */
  merchants: z.record(
    z.string(),
    z.object({
      /** The wallet the merchant's payments go to; null = not configured (the host cannot start). */
      payTo: z
        .string()
        .regex(/^0x[0-9a-fA-F]{40}$/, "a wallet address")
        .transform((a) => a.toLowerCase() as `0x${string}`)
        .nullable(),
      /**
       * The host's Solana wallet, a base58 owner (X402M_<HOST>_SOLANA_PAY_TO; issue 86): with X402M_SOLANA_RPC_URL,
       * its routes offer `exact` on Solana too (docs/platform.md, "Solana"). Null: EVM only.
       */
      solanaPayTo: z.string().regex(SOLANA_ADDRESS, "a Solana address (base58)").nullable(),
      /** Public base URL of the host (listings, OpenAPI, resource URLs); null = its own address. */
      publicUrl: BaseUrl.nullable(),
      port: Port,
      /**
       * The host's own paragraph of guidance for agents (`info.x-guidance`, `/llms.txt`); null: its
       * catalogue's. The kit adds how to pay and where its documents are.
       */
      guidance: z
        .string()
        .trim()
        .min(1)
        .max(MAX_GUIDANCE_CHARS, `at most ${MAX_GUIDANCE_CHARS} characters`)
        .nullable(),
      /**
       * The key that signs the claims and refunds of this host's payment channels, which then name it as
       * their receiverAuthorizer, so that any facilitator serving batch-settlement settles them; null: its
       * facilitator's authorizer, where that facilitator signs for it (docs/platform.md). Never printed.
       */
      channelAuthorizerKey: z
        .string()
        .regex(AUTHORIZER_KEY, "a 32-byte private key in hex, 0x-prefixed")
        .nullable(),
      /**
       * The key this host signs its offers and receipts with (payments/receipts/receipts.ts); null: one kept in the
       * data directory, made on first start. Never printed.
       */
      receiptKey: z.string().regex(RECEIPT_KEY, "a 32-byte private key in hex, 0x-prefixed").nullable(),
      /**
       * The host's ERC-8021 builder code, declared in its 402s as the app that sells (payments/extensions/builder-code.ts);
       * null ("none"): none declared.
       */
      builderCode: z
        .string()
        .regex(
          BUILDER_CODE_PATTERN,
          `lower-case letters, digits and _, 1 to 32 of them, or "${NO_BUILDER_CODE}"`,
        )
        .nullable(),
    }),
  ),
});

export type MerchantKitSettings = z.infer<typeof MerchantKitSchema>;

export const merchantKitSection: Section<typeof MerchantKitSchema> = {
  schema: MerchantKitSchema,
  read: ({ env }) => ({
    payments: readPayments(env),
    channels: readChannels(env),
    paymentIds: readPaymentIds(env),
    contact: { email: env.X402M_CONTACT_EMAIL || null, url: env.X402M_CONTACT_URL || null },
    merchants: Object.fromEntries(
      Object.entries(MERCHANT_HOSTS).map(([host, defaults]) => {
        const prefix = merchantEnvPrefix(host);
        const fallback = defaults.payToFrom
          ? env[`${merchantEnvPrefix(defaults.payToFrom)}PAY_TO`]
          : undefined;
        return [
          host,
          {
            payTo: env[`${prefix}PAY_TO`] || fallback || null,
            solanaPayTo:
              env[`${prefix}SOLANA_PAY_TO`] ||
              (defaults.payToFrom
                ? env[`${merchantEnvPrefix(defaults.payToFrom)}SOLANA_PAY_TO`]
                : undefined) ||
              null,
            publicUrl: env[`${prefix}URL`] || null,
            port: env[`${prefix}PORT`] ?? String(defaults.port),
            guidance: env[`${prefix}GUIDANCE`] || null,
            channelAuthorizerKey: readAuthorizerKey(
              env,
              prefix,
              defaults.payToFrom ? merchantEnvPrefix(defaults.payToFrom) : undefined,
            ),
            receiptKey: readReceiptKey(
              env,
              prefix,
              defaults.payToFrom ? merchantEnvPrefix(defaults.payToFrom) : undefined,
            ),
            builderCode: readBuilderCode(
              env,
              prefix,
              defaultBuilderCode(host),
              defaults.payToFrom ? merchantEnvPrefix(defaults.payToFrom) : undefined,
            ),
          },
        ];
      }),
    ),
  }),
  settingOf: (path) => {
    const [head, host, field] = path;
    if (head === "payments") return paymentsSetting(path.slice(1));
    if (head === "channels") return channelsSetting(path.slice(1));
    if (head === "paymentIds") return paymentIdsSetting(path.slice(1));
    if (head === "contact")
      return settingIn({ "contact.email": "X402M_CONTACT_EMAIL", "contact.url": "X402M_CONTACT_URL" }, path);
    if (!host) return undefined;
    const suffix: Record<string, string> = {
      payTo: "PAY_TO",
      solanaPayTo: "SOLANA_PAY_TO",
      publicUrl: "URL",
      guidance: "GUIDANCE",
      channelAuthorizerKey: "CHANNEL_AUTHORIZER_KEY",
      receiptKey: "RECEIPT_KEY",
      builderCode: "BUILDER_CODE",
    };
    return `${merchantEnvPrefix(host)}${suffix[field ?? ""] ?? "PORT"}`;
  },
};
