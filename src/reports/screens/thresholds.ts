/**
 * Every screen threshold, in one place. Amounts are atomic USDC units (1 USD = 1,000,000).
 * `docs/report.md` explains each one; change them here and the docs together.
 */
export const THRESHOLDS = {
  /** tiny_repeat: a payment below $0.001 is tiny: below every price in the catalogues we know. */
  tinyAmount: 1_000n,
  /** tiny_repeat: at least this many tiny payments from one payer to one merchant in the window. */
  tinyRepeatMinPayments: 10,
  /** tiny_repeat: and the most common tiny amount makes up at least this share of them (a bot's fixed amount; metered charges vary). */
  tinyRepeatUniformShare: 0.8,

  /** merchant_funded: a merchant-to-payer transfer counts as funding this many blocks (28 days) before the window too. */
  fundingLookbackBlocks: 1_209_600,

  /** ring: value flowing back from the merchant to the payer, as a share of what the payer paid, that makes a cycle. */
  ringMinReturnShare: 0.5,
  /** ring: a wallet sending to at least this many distinct wallets in the window is a hub (exchange, bridge, payroll) and is not a ring link. */
  hubMinRecipients: 50,

  /** prober: a payer that paid at least this many distinct merchants in the window... */
  proberMinMerchants: 20,
  /** prober: ...paying most of them (this share or more) at most `proberMaxPaymentsPerMerchant` times... */
  proberLightShare: 0.8,
  proberMaxPaymentsPerMerchant: 3,
  /** prober: ...with payments of at most $0.05 each. */
  proberMaxAmount: 50_000n,
} as const;
