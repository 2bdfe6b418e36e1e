/**
 * The social-data API's provider as the operator configured it (`config.social`, X402M_SOCIAL_PROVIDER):
 * one setup per configuration, so the social host and the proxy host share one provider (one X session
 * pool, one lookup cache).
 */
import type { Config } from "../../config/config.ts";
import { withLookupCache } from "./cache.ts";
import { archiveSetup } from "./providers/archive/index.ts";
import { twitterApiProvider } from "./providers/twitterapi/index.ts";
import { xWebProvider } from "./providers/x-web/index.ts";
import type { SocialSetup } from "./runtime.ts";

export type SocialSettings = Config["social"];

const setups = new WeakMap<SocialSettings, SocialSetup>();

export function socialSetup(settings: SocialSettings): SocialSetup {
  let setup = setups.get(settings);
  if (!setup) {
    setup = makeSetup(settings);
    setups.set(settings, setup);
  }
  return setup;
}

function makeSetup(settings: SocialSettings): SocialSetup {
  const { tokenSecret } = settings;
  const cached = (provider: Parameters<typeof withLookupCache>[0]) =>
    withLookupCache(provider, { ttlMs: settings.cacheSeconds * 1000 });
  switch (settings.provider) {
    case "archive":
      return archiveSetup(tokenSecret);
    case "x-web": {
      const { accounts, url, uploadUrl, bearerToken, queryIds, features } = settings.xWeb;
      return {
        provider: () =>
          cached(
            xWebProvider({
              accounts,
              queryIds,
              features,
              ...(url && { baseUrl: url }),
              ...(uploadUrl && { uploadUrl }),
              ...(bearerToken && { bearerToken }),
              ...(settings.timeoutMs && { timeoutMs: settings.timeoutMs }),
            }),
          ),
        tokenSecret,
        upstream: true,
      };
    }
    case "twitterapi":
      return {
        provider: () =>
          cached(
            twitterApiProvider({
              apiKey: settings.twitterapi.key ?? "",
              ...(settings.twitterapi.url && { baseUrl: settings.twitterapi.url }),
              ...(settings.twitterapi.proxy && { proxy: settings.twitterapi.proxy }),
              ...(settings.timeoutMs && { timeoutMs: settings.timeoutMs }),
            }),
          ),
        tokenSecret,
        upstream: true,
      };
  }
}
