/**
 * The social-data API's provider as the operator configured it (`config.social`, X402M_SOCIAL_PROVIDER):
 * one setup per configuration, so the social host and the proxy host share one provider (one X session
 * pool, one lookup cache).
 */
import type { Errors } from "../../merchant-kit/index.ts";
import { withLookupCache } from "./cache.ts";
import { BAD_SESSION, SESSION_PATHS, UPSTREAM_ERRORS } from "./provider.ts";
import { archiveSetup } from "./providers/archive/index.ts";
import { twitterApiProvider } from "./providers/twitterapi/index.ts";
import { xWebProvider } from "./providers/x-web/index.ts";
import type { SocialSetup } from "./runtime.ts";
import type { SocialSettings } from "./settings.ts";

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
        errors: (path) => ({ ...UPSTREAM_ERRORS, ...(SESSION_PATHS.has(path) && BAD_SESSION) }),
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
        errors: (path) => ({
          ...UPSTREAM_ERRORS,
          ...twitterApiRefusals(path, settings.twitterapi.proxy !== undefined),
        }),
      };
  }
}

/** What twitterapi.io cannot do (its provider's notes): no list lookup, no caller's mentions, no upload without a proxy. */
function twitterApiRefusals(path: string, proxy: boolean): Errors {
  const unsupported = { 501: "The configured provider (twitterapi.io) cannot do this (unsupported)." };
  if (path === "/lists/by/id" || path === "/tweets/mentions") return unsupported;
  if (path === "/tweets/mediaUpload") return proxy ? BAD_SESSION : unsupported;
  return {};
}
