/**
 * Every number the screens use, in one place. Amounts are atomic USDC units (1 USD = 1,000,000).
 * `docs/screens.md` gives the reason for each one and what stepping past it would cost a gamer; change
 * them here and the docs together. merchant_funded follows money wherever the data holds it, with numbers only
 * for the money it reads back out of a hub it does not follow (`return*`); ring flags in proportion to what came back.
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
  /** tiny_repeat: of k tiny payments from one cluster to one merchant in the window, whatever their amounts, k / this are flagged; from this many on, all. */
  tinyRepeatMinPayments: 10,

  /**
   * A wallet that is not a merchant is a hub (an exchange, a bridge) when its senders are at least this many
   * independent parties, counted by cluster and weighted by what each sent (whole from a this-many-th of what
   * the largest party sent, in proportion below; a sender the wallet itself paid is left out): many unrelated
   * people's money, unlike a distributor fed by one party, however many tiny senders it adds. A wallet that
   * paid out no more than one party gave it is that party's, hub by no rule of the data's. merchant_funded
   * leaves such a hub out unless the data holds a balance of it that money out of sight does not cover;
   * rings always do. Swept in test/reports/hub-sweeps.test.ts.
   */
  hubMinSenders: 50,
  /**
   * A wallet that is not a merchant and sent USDC to at least this many wallets is a hub when those wallets
   * behave independently: their x402 payments in the window go to at least `hubMinRecipientMerchants`
   * merchants, none paid by more than `hubMaxRecipientShare` of them, and none sent money back to it (an
   * exchange seen only by its withdrawals, as in an import of payments and their funding). Bought with cover
   * wallets, the status only stops the wallet being a funder: merchant_funded still follows it wherever the
   * data saw its money arrive (test/reports/hub-sweeps.test.ts).
   */
  hubMinRecipients: 50,
  hubMinRecipientMerchants: 10,
  hubMaxRecipientShare: 0.5,

  /**
   * Clusters: a wallet's funder is the cluster that gave it at least half of what it received from wallets
   * that are not hubs; the link weighs its share of everything it received (an exchange's included) over
   * this, at most 1, and is strong from this share up: a farm owner's share a little below it makes a link a
   * little less sure, not none (docs/screens.md, "Funding").
   */
  fundingMinShare: 0.25,
  /**
   * Clusters: below this share a funder makes no link at all, and a wallet's first funder that is not a hub
   * makes a weak one from it up: a stranger's dust must not make a customer anyone's. A farm owner that
   * gives less is seen by the behaviour rule instead, whose groups count senders by cluster.
   */
  firstFunderMinShare: 0.05,
  /** Clusters by behaviour: at least this many wallets of one group (funded from one source) behave alike... */
  behaviourMinWallets: 5,
  /**
   * ...sharing a merchant and a band of amounts, each having spent at most this share of its window's
   * payments (by amount) at other merchants (the diversity guard: where its money goes, not how many
   * merchants it touched; below it the link weighs in proportion to the share spent at the merchant)...
   */
  behaviourMaxElsewhereShare: 0.5,
  /** ...and the chance that independent payers would (the null model) is at most this: a link weighing nothing... */
  behaviourWeakChance: 1e-6,
  /** ...up to this, where it weighs fully (in proportion to the chance's logarithm between): a strong link. */
  behaviourStrongChance: 1e-9,
  /**
   * merchant_funded through a hub it does not follow (docs/screens.md, "Money that comes back through a hub"):
   * a payout of the hub to one of the merchant's buyers within a span after the merchant's deposit is a
   * candidate return, read at every span from this (ms)...
   */
  returnMinSpanMs: 600_000,
  /** ...to this, each this many times the last (10 min, 15, 22.5, ... up to a day)... */
  returnMaxSpanMs: 86_400_000,
  returnSpanStep: 1.5,
  /** ...a span only where the deposits' spans cover at most this share of the time read (the rest is the base rate)... */
  returnMaxSpanShare: 0.5,
  /**
   * ...the base rate being the hub's payouts to the same buyers outside the spans, at the hours of the day within
   * this (ms) of the deposit's, on every day read: a merchant that deposits when its buyers withdraw is compared
   * with those hours, not with the night...
   */
  returnNearMs: 10_800_000,
  /**
   * ...where the chance that as many of the merchant's deposits would be followed so soon by a payout to its
   * buyers, at the rate such payouts follow other times, is at most this (the excess read weighs nothing)...
   */
  returnWeakChance: 1e-6,
  /** ...up to this, where the excess weighs fully (in proportion to the chance's logarithm between). */
  returnStrongChance: 1e-9,
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
