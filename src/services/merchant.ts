import { HTTPFacilitatorClient } from "@x402/core/server";
import type { Database } from "../common/db/index.ts";
import { type Listening, listenWithUrl } from "../common/listen.ts";
import { type Config, ConfigError, type MerchantHost, merchantEnvPrefix } from "../config/config.ts";
import { merchantApp } from "../merchant-kit/app.ts";
import { missingAliasPaths } from "../merchant-kit/catalogue.ts";
import { MERCHANTS } from "../merchants/index.ts";
import { UTILITY_ALIAS_PATHS, utilityMerchant } from "../merchants/utility/catalogue.ts";

/** One merchant host on its configured port, paid through the configured facilitator. */
export async function serveMerchant(name: MerchantHost, config: Config, db: Database): Promise<Listening> {
  const host = config.merchants[name];
  if (!host?.payTo) throw new ConfigError(`${name} needs its wallet: set ${merchantEnvPrefix(name)}PAY_TO`);
  const payTo = host.payTo;
  if (name === "utility-alias") {
    const missing = missingAliasPaths(utilityMerchant({ payTo, publicUrl: "" }), UTILITY_ALIAS_PATHS);
    if (missing.length > 0) {
      console.error(
        JSON.stringify({
          level: "warn",
          msg: "the alias host lacks endpoints its source does not have yet",
          missing,
        }),
      );
    }
  }
  return listenWithUrl(
    async (url) =>
      (
        await merchantApp(
          MERCHANTS[name]({
            payTo,
            publicUrl: host.publicUrl ?? url,
            dns: { servers: config.dnsServers },
            providers: config.providers,
          }),
          {
            services: { db, config },
            facilitator: new HTTPFacilitatorClient({ url: config.payments.facilitatorUrl }),
            payments: config.payments,
          },
        )
      ).fetch,
    config.host,
    host.port,
  );
}
