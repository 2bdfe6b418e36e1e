/**
 * Every screen threshold, in one place. Amounts are atomic USDC units (1 USD = 1,000,000).
 * `docs/screens.md` gives the reason for each one; change them here and the docs together.
 */
export const THRESHOLDS = {
  /** tiny_repeat: a payment is tiny when it is at most the merchant's price divided by this... */
  tinyPriceDivisor: 5,
  /** ...where its price is the lowest of its listed prices and of the amounts at least this many wallets paid it... */
  tinyPricePayers: 5,
  /** ...and at least this share of the merchant's payers: a farm of a few wallets is not a merchant's clientele... */
  tinyPricePayerShare: 0.2,
  /** ...and, for a merchant with neither, tiny means at most this: below $0.001, under every price in the catalogues we know. */
  tinyFallbackMax: 999n,
  /** tiny_repeat: at least this many tiny payments from one payer to one merchant in the window. */
  tinyRepeatMinPayments: 10,
  /** tiny_repeat: and the most common tiny amount makes up at least this share of them (a bot's fixed amount; metered charges vary). */
  tinyRepeatUniformShare: 0.8,

  /** merchant_funded: a funding path may start this many blocks (8 weeks) before the window. */
  fundingLookbackBlocks: 2_419_200,
  /** merchant_funded: at most this many transfers from the merchant to the payer (three wallets between them). */
  fundingMaxHops: 4,

  /** ring: what came back to a payer from inside its cycle, as a share of what it sent into it, that makes a ring. */
  ringMinReturnShare: 0.5,

  /**
   * ring and merchant_funded: a wallet that is not a merchant and exchanged plain transfers with at least
   * this many distinct wallets (as sender or as recipient) is a hub (exchange, bridge, payroll): paths
   * are not followed through it.
   */
  hubMinCounterparties: 50,

  /** prober: a payer that paid at least this many distinct merchants in the window... */
  proberMinMerchants: 20,
  /** prober: ...paying most of them (this share or more) at most `proberMaxPaymentsPerMerchant` times... */
  proberLightShare: 0.8,
  proberMaxPaymentsPerMerchant: 3,
  /** prober: ...with payments of at most $0.05 each. */
  proberMaxAmount: 50_000n,
} as const;
