/**
 * Every number the screens use, in one place. Amounts are atomic USDC units (1 USD = 1,000,000).
 * `docs/screens.md` gives the reason for each one and what stepping past it would cost a gamer; change
 * them here and the docs together. merchant_funded has none: it follows money wherever the data holds it,
 * and ring flags in proportion to what came back.
 */
export const THRESHOLDS = {
  /** tiny_repeat: a payment is tiny when it is at most the merchant's price divided by this (a share of the price)... */
  tinyPriceDivisor: 5,
  /** ...where its price is the lowest of its listed prices and of the amounts at least this many clusters of buyers paid it... */
  tinyPricePayers: 5,
  /** ...and at least this share of the merchant's clusters: one farm, however split, is not a merchant's clientele... */
  tinyPricePayerShare: 0.2,
  /** ...and, for a merchant with neither, tiny means at most this: below $0.001, under every price in the catalogues we know. */
  tinyFallbackMax: 999n,
  /** tiny_repeat: at least this many tiny payments from one cluster to one merchant in the window, whatever their amounts. */
  tinyRepeatMinPayments: 10,

  /**
   * A wallet that is not a merchant and received plain transfers from at least this many distinct clusters
   * of wallets is a hub (an exchange, a bridge): fed by many independent wallets, unlike a distributor fed
   * by one. merchant_funded leaves one out only where following it could change nothing; rings always do.
   */
  hubMinSenders: 50,
  /**
   * ring: a wallet that is not a merchant and exchanged plain transfers with at least this many distinct
   * wallets (as sender or as recipient) is also a hub for the ring graph (a payroll, an exchange's
   * withdrawal wallet): a cycle through it says nothing about who paid whom.
   */
  hubMinCounterparties: 50,

  /** prober: a payer's cluster that paid at least this many distinct merchants in the window... */
  proberMinMerchants: 20,
  /** prober: ...paying most of them (this share or more) at most `proberMaxPaymentsPerMerchant` times... */
  proberLightShare: 0.8,
  proberMaxPaymentsPerMerchant: 3,
  /** prober: ...with payments of at most $0.05 each. */
  proberMaxAmount: 50_000n,
} as const;
