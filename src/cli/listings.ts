import { UsageError } from "../common/errors.ts";
import { ConfigError } from "../config/config-error.ts";
import { MERCHANT_HOST_NAMES, type MerchantHost, merchantEnvPrefix } from "../config/ports.ts";
import { listingsNdjson } from "../merchant-kit/index.ts";
import { MERCHANTS } from "../merchants/index.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

/**
 * Prints the merchants' paid endpoints as import-format `listing` records (NDJSON), ready for
 * `import`: the same feed the reports show, built from the catalogues. With no merchant's wallet set (and
 * no `--only`) there is nothing to list: a ConfigError naming the settings, exit 2.
 */
export async function runListings(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("listings takes no arguments");
  const config = configFrom(flags);
  const hosts = MERCHANT_HOST_NAMES;
  const names = flags.only
    ? flags.only
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : hosts.filter((h) => config.merchants[h]?.payTo);
  if (names.length === 0) {
    if (flags.only) throw new UsageError(`--only takes a list of ${hosts.join(", ")}`);
    // Nothing to list is a setting missing, not an empty feed: say which settings would give it merchants.
    const settings = hosts.map((h) => `${merchantEnvPrefix(h)}PAY_TO`).join(", ");
    throw new ConfigError(`listings has no merchant to list: set a merchant's wallet (${settings})`);
  }
  const unknown = names.filter((n) => !hosts.includes(n as MerchantHost));
  if (unknown.length > 0)
    throw new UsageError(`--only takes a list of ${hosts.join(", ")}; not "${unknown.join(",")}"`);
  const merchants = (names as MerchantHost[]).map((name) => {
    const host = config.merchants[name];
    if (!host?.payTo) throw new ConfigError(`${name} needs its wallet: set ${merchantEnvPrefix(name)}PAY_TO`);
    return MERCHANTS[name](
      { payTo: host.payTo, publicUrl: host.publicUrl ?? `http://${config.host}:${host.port}` },
      config,
    );
  });
  process.stdout.write(listingsNdjson(merchants));
  return 0;
}
