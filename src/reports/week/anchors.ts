/**
 * The anchors of a merchant's evidence page. The flag feed's links (flag-records.ts) point at them and the
 * pages (render/evidence-page.ts, render/report-page.ts) carry them, so they are defined here, below both,
 * and a link in a sealed week's feed keeps landing where the page puts the wallet.
 */

/** The anchor of one wallet's evidence on the page, which the report page links. */
export const evidenceAnchor = (kind: string, wallet: string) => `${kind}-${wallet}`;

/** The anchor of a flag's section on the page, which counts the wallets it does not name. */
export const flagAnchor = (kind: string) => `flag-${kind}`;
