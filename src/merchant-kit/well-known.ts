import { type Merchant, resourceUrl } from "./endpoint.ts";
import { receiptKid } from "./payments/receipts/index.ts";

/**
 * `/.well-known/x402`: the discovery document x402 crawlers fetch from a host (`version` 1, the paid
 * `resources` as full URLs), with the x402 protocol version and where the OpenAPI document is.
 */
export interface WellKnownX402 {
  version: 1;
  x402Version: 2;
  resources: string[];
  openapi: string;
  instructions: string;
  /**
   * Who signs this host's offers and receipts (`offer-receipt`), where it signs them: the key id they carry
   * and its address. A signature proves only that some key signed; a buyer checks that key against the one
   * the host names here, over the same TLS origin as the API itself.
   */
  receipts?: { kid: string; signer: string };
}

export function wellKnownX402(merchant: Merchant): WellKnownX402 {
  return {
    version: 1,
    x402Version: 2,
    // Unlisted endpoints (`listed: false`) are served but not advertised, here as in listings and Bazaar.
    resources: merchant.endpoints.filter((e) => e.listed !== false).map((e) => resourceUrl(merchant, e)),
    openapi: `${merchant.publicUrl}/openapi.json`,
    instructions: `Every resource is paid per call in USDC through x402; see ${merchant.publicUrl}/docs, and for agents ${merchant.publicUrl}/llms.txt.`,
    ...(merchant.receiptSigner && {
      receipts: { kid: receiptKid(merchant.receiptSigner.address), signer: merchant.receiptSigner.address },
    }),
  };
}
