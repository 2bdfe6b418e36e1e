/** The configuration: each setting read from its variable, and a bad one named in the error. */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/services/config.ts";

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig({ env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
};

describe("the configuration", () => {
  it("reads the fetch allow-list as a comma list, and names the variable of a bad entry", () => {
    expect(loadConfig({ env: {} }).fetchAllow).toEqual([]);
    expect(
      loadConfig({ env: { X402M_FETCH_ALLOW: " 127.0.0.1, 10.0.0.0/8 ,wiki.internal,," } }).fetchAllow,
    ).toEqual(["127.0.0.1", "10.0.0.0/8", "wiki.internal"]);
    expect(refusal({ X402M_FETCH_ALLOW: "10.0.0.0/99" })).toMatch(/X402M_FETCH_ALLOW/);
  });

  it("names the variable of each setting it refuses", () => {
    expect(refusal({ X402M_RPC_URL: "ftp://x" })).toMatch(/X402M_RPC_URL/);
    expect(refusal({ X402M_FACILITATOR_URL: "nope" })).toMatch(/X402M_FACILITATOR_URL/);
    expect(refusal({ X402M_DNS_SERVERS: "not-an-ip" })).toMatch(/X402M_DNS_SERVERS/);
    expect(refusal({ X402M_UTILITY_PAY_TO: "0x12" })).toMatch(/X402M_UTILITY_PAY_TO/);
    expect(refusal({ X402M_UTILITY_PORT: "70000" })).toMatch(/X402M_UTILITY_PORT/);
  });

  it("defaults the chain that payers' balances are read from to the devnet's", () => {
    expect(loadConfig({ env: {} }).payments.rpcUrl).toBe("http://127.0.0.1:8545");
    expect(loadConfig({ env: { X402M_RPC_URL: "https://base.example/rpc" } }).payments.rpcUrl).toBe(
      "https://base.example/rpc",
    );
  });

  it("pays in the network's USDC where a chain record knows it, unless told another token", () => {
    expect(loadConfig({ env: {} }).payments.asset.address).toBe("0x833589fcd6edb6e08f4c7c32d4f71b54bda02913");
    expect(loadConfig({ env: { X402M_NETWORK: "eip155:137" } }).payments.asset).toEqual({
      address: "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359",
      name: "USD Coin",
      version: "2",
      decimals: 6,
    });
    expect(
      loadConfig({ env: { X402M_NETWORK: "eip155:42161", X402M_ASSET_NAME: "USDC" } }).payments.asset,
    ).toMatchObject({ address: "0xaf88d065e77c8cc2239327c5edb3a432268e5831", name: "USDC" });
  });

  it("takes payment on each network X402M_NETWORK lists, each further one's USDC from its record and RPC from its variable", () => {
    const payments = loadConfig({
      env: {
        X402M_NETWORK: "eip155:8453, eip155:137",
        X402M_RPC_URL: "http://127.0.0.1:1/base",
        X402M_RPC_URL_POLYGON: "http://127.0.0.1:1/polygon",
      },
    }).payments;
    expect(payments.network).toBe("eip155:8453");
    expect(payments.networks.map((n) => [n.network, n.asset.address, n.rpcUrl])).toEqual([
      ["eip155:8453", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "http://127.0.0.1:1/base"],
      ["eip155:137", "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359", "http://127.0.0.1:1/polygon"],
    ]);
    // The first network's RPC is its chain's variable too, when X402M_RPC_URL is not set.
    expect(
      loadConfig({ env: { X402M_NETWORK: "eip155:137", X402M_RPC_URL_POLYGON: "http://127.0.0.1:1/p" } })
        .payments.rpcUrl,
    ).toBe("http://127.0.0.1:1/p");
    expect(refusal({ X402M_NETWORK: "eip155:8453,eip155:137" })).toMatch(
      /X402M_NETWORK names eip155:137: set X402M_RPC_URL_POLYGON/,
    );
    expect(refusal({ X402M_NETWORK: "eip155:8453,eip155:10" })).toMatch(
      /^invalid X402M_NETWORK: eip155:10 after the first needs a chain record/,
    );
    expect(
      refusal({ X402M_NETWORK: "eip155:137,eip155:137", X402M_RPC_URL_POLYGON: "http://127.0.0.1:1/p" }),
    ).toMatch(/^invalid X402M_NETWORK: .*eip155:137 is listed twice/);
    expect(
      refusal({
        X402M_NETWORK: "eip155:8453,eip155:137",
        X402M_ASSET_DECIMALS: "18",
        X402M_RPC_URL_POLYGON: "http://127.0.0.1:1/p",
      }),
    ).toMatch(/^invalid X402M_NETWORK: .*has 6 decimals, the first network's 18/);
  });

  it("reads a facilitator's own key and payees per chain, and names the variable of a bad one", () => {
    const key = `0x${"11".repeat(32)}`;
    expect(loadConfig({ env: {} }).facilitatorChains).toEqual({});
    expect(
      loadConfig({
        env: {
          X402M_FACILITATOR_KEY_POLYGON: key,
          X402M_FACILITATOR_PAYEES_ARBITRUM: `0x${"AB".repeat(20)}`,
        },
      }).facilitatorChains,
    ).toEqual({ polygon: { key, payees: [] }, arbitrum: { key: null, payees: [`0x${"ab".repeat(20)}`] } });
    expect(refusal({ X402M_FACILITATOR_KEY_POLYGON: "0x12" })).toMatch(
      /^invalid X402M_FACILITATOR_KEY_POLYGON: /,
    );
    expect(refusal({ X402M_FACILITATOR_PAYEES_BASE: "shop" })).toMatch(
      /^invalid X402M_FACILITATOR_PAYEES_BASE: /,
    );
  });

  it("follows a chain given X402M_RPC_URL_<CHAIN>, none by default, and names the variable of a bad URL", () => {
    expect(loadConfig({ env: {} }).follow.rpc).toEqual({});
    expect(
      loadConfig({
        env: { X402M_RPC_URL_POLYGON: " https://polygon.example/rpc ", X402M_RPC_URL_ARBITRUM: "" },
      }).follow.rpc,
    ).toEqual({ polygon: "https://polygon.example/rpc" });
    expect(refusal({ X402M_RPC_URL_ARBITRUM: "wss://arb.example" })).toMatch(
      /^invalid X402M_RPC_URL_ARBITRUM: an http\(s\) JSON-RPC URL/,
    );
  });

  it("serves the inference host on its own port, wallet and URL", () => {
    expect(loadConfig({ env: {} }).merchants.inference).toEqual({
      payTo: null,
      publicUrl: null,
      port: 8407,
      guidance: null,
      channelAuthorizerKey: null,
      receiptKey: null,
      solanaPayTo: null,
      builderCode: "x402m_inference",
    });
    expect(
      loadConfig({
        env: {
          X402M_INFERENCE_PAY_TO: "0xABCDEF0123456789ABCDEF0123456789ABCDEF01",
          X402M_INFERENCE_PORT: "9000",
          X402M_INFERENCE_URL: "https://inference.example/",
        },
      }).merchants.inference,
    ).toEqual({
      payTo: "0xabcdef0123456789abcdef0123456789abcdef01",
      publicUrl: "https://inference.example",
      port: 9000,
      guidance: null,
      channelAuthorizerKey: null,
      receiptKey: null,
      solanaPayTo: null,
      builderCode: "x402m_inference",
    });
    expect(refusal({ X402M_INFERENCE_PORT: "-1" })).toMatch(/X402M_INFERENCE_PORT/);
  });

  it("gives the inference routes no engine unless one is set, the offline engine only when chosen", () => {
    const { inference } = loadConfig({ env: {} });
    expect(inference.engine).toBeNull();
    expect(inference.upstream).toBeNull();
    expect(loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline" } }).inference.engine).toBe("offline");
    expect(refusal({ X402M_INFERENCE_ENGINE: "echo" })).toMatch(
      /^invalid X402M_INFERENCE_ENGINE: .*"offline"/,
    );
    expect(Object.keys(inference.routes)).toEqual([
      "default",
      ...Array.from({ length: 15 }, (_, i) => `t${i + 1}`),
    ]);
    expect(inference.routes.t3).toEqual({ model: null, rates: null, gguf: null });
  });

  it("reads the inference upstream and each route's model and rates", () => {
    const { inference } = loadConfig({
      env: {
        X402M_INFERENCE_LLM_URL: "https://openrouter.example/api/v1/",
        X402M_INFERENCE_LLM_KEY: "sk-test",
        X402M_INFERENCE_LLM_TIMEOUT_MS: "60000",
        X402M_INFERENCE_DEFAULT_MODEL: "small-model",
        X402M_INFERENCE_DEFAULT_RATES: "0.05,0.08",
        X402M_INFERENCE_TIER_15_MODEL: "large-model",
        X402M_INFERENCE_TIER_15_RATES: " 3 , 15 ",
      },
    });
    expect(inference.upstream).toEqual({
      url: "https://openrouter.example/api/v1",
      key: "sk-test",
      timeoutMs: 60000,
    });
    expect(inference.routes.default).toEqual({
      model: "small-model",
      rates: { inputPerMillion: "0.05", outputPerMillion: "0.08" },
      gguf: null,
    });
    expect(inference.routes.t15?.rates).toEqual({ inputPerMillion: "3", outputPerMillion: "15" });
    expect(inference.routes.t1).toEqual({ model: null, rates: null, gguf: null });
    // The audio routes have their own upstream, off by default.
    expect(inference.audio).toEqual({
      upstream: null,
      speechModel: "tts-1",
      transcriptionModel: "whisper-1",
    });
    const audio = loadConfig({
      env: {
        X402M_INFERENCE_AUDIO_URL: "https://audio.example/v1/",
        X402M_INFERENCE_AUDIO_KEY: "sk-audio",
        X402M_INFERENCE_SPEECH_MODEL: "kokoro",
        X402M_INFERENCE_TRANSCRIPTION_MODEL: "whisper-large-v3",
      },
    }).inference.audio;
    expect(audio).toEqual({
      upstream: { url: "https://audio.example/v1", key: "sk-audio" },
      speechModel: "kokoro",
      transcriptionModel: "whisper-large-v3",
    });
  });

  it("names the inference variable it refuses", () => {
    expect(refusal({ X402M_INFERENCE_TIER_4_RATES: "0.1" })).toMatch(
      /^invalid X402M_INFERENCE_TIER_4_RATES: /,
    );
    expect(refusal({ X402M_INFERENCE_TIER_4_RATES: "0.1,-2" })).toMatch(/X402M_INFERENCE_TIER_4_RATES/);
    expect(refusal({ X402M_INFERENCE_DEFAULT_RATES: "1,0.0000000001" })).toMatch(
      /X402M_INFERENCE_DEFAULT_RATES/,
    );
    expect(refusal({ X402M_INFERENCE_LLM_URL: "not a url" })).toMatch(/X402M_INFERENCE_LLM_URL/);
    expect(
      refusal({ X402M_INFERENCE_LLM_URL: "http://127.0.0.1:1/v1", X402M_INFERENCE_LLM_TIMEOUT_MS: "5" }),
    ).toMatch(/X402M_INFERENCE_LLM_TIMEOUT_MS/);
    // An upstream model without its rates could not be metered.
    expect(
      refusal({ X402M_INFERENCE_LLM_URL: "http://127.0.0.1:1/v1", X402M_INFERENCE_TIER_8_MODEL: "reasoner" }),
    ).toMatch(/^invalid X402M_INFERENCE_TIER_8_RATES: an upstream model needs its rates/);
    expect(refusal({ X402M_INFERENCE_AUDIO_URL: "ftp://audio" })).toMatch(
      /^invalid X402M_INFERENCE_AUDIO_URL: /,
    );
    expect(
      refusal({ X402M_INFERENCE_AUDIO_URL: "http://127.0.0.1:1/v1", X402M_INFERENCE_AUDIO_TIMEOUT_MS: "9" }),
    ).toMatch(/^invalid X402M_INFERENCE_AUDIO_TIMEOUT_MS: /);
    for (const message of [refusal({ X402M_INFERENCE_TIER_4_RATES: "x" })]) expect(message).not.toMatch(/\n/);
  });

  it("takes each host's builder code (an alias's its source's) and the facilitator's, none when told, and names a bad one's variable", () => {
    const config = loadConfig({
      env: {
        X402M_UTILITY_BUILDER_CODE: "bc_shop",
        X402M_SOCIAL_BUILDER_CODE: "none",
        X402M_FACILITATOR_BUILDER_CODE: "none",
      },
    });
    expect(config.merchants.utility?.builderCode).toBe("bc_shop");
    expect(config.merchants["utility-alias"]?.builderCode).toBe("bc_shop");
    expect(config.merchants.social?.builderCode).toBeNull();
    expect(config.merchants["social-proxy"]?.builderCode).toBeNull();
    expect(config.merchants.inference?.builderCode).toBe("x402m_inference");
    expect(config.facilitatorBuilderCode).toBeNull();
    expect(loadConfig({ env: {} }).facilitatorBuilderCode).toBe("x402_merchants");
    expect(refusal({ X402M_INFERENCE_BUILDER_CODE: "Bad-Code" })).toMatch(/X402M_INFERENCE_BUILDER_CODE/);
    expect(refusal({ X402M_FACILITATOR_BUILDER_CODE: "x".repeat(33) })).toMatch(
      /X402M_FACILITATOR_BUILDER_CODE/,
    );
  });

  it("settles in groups only when X402M_FACILITATOR_GROUP_SETTLEMENTS is on, and refuses anything but on or off in one line", () => {
    const grouped = (value?: string) =>
      loadConfig({ env: value === undefined ? {} : { X402M_FACILITATOR_GROUP_SETTLEMENTS: value } })
        .facilitatorGroupSettlements;
    expect(grouped()).toBe(false);
    expect(grouped("")).toBe(false);
    expect(grouped("off")).toBe(false);
    expect(grouped("on")).toBe(true);
    for (const bad of ["yes", "true", "1", "ON"]) {
      const message = refusal({ X402M_FACILITATOR_GROUP_SETTLEMENTS: bad });
      expect(message).toBe("invalid X402M_FACILITATOR_GROUP_SETTLEMENTS: on or off (unset: off)");
    }
  });

  it("asks for receipts every X402M_FACILITATOR_POLL_MS (default 500), a whole number from 10 to 10000", () => {
    const poll = (value?: string) =>
      loadConfig({ env: value === undefined ? {} : { X402M_FACILITATOR_POLL_MS: value } }).facilitatorPollMs;
    expect(poll()).toBe(500);
    expect(poll("")).toBe(500);
    expect(poll("20")).toBe(20);
    for (const bad of ["0", "9", "10001", "1.5", "fast"]) {
      expect(refusal({ X402M_FACILITATOR_POLL_MS: bad })).toBe(
        "invalid X402M_FACILITATOR_POLL_MS: a whole number of ms from 10 to 10000",
      );
    }
  });

  it("serves the social-data API from the archive unless told otherwise, the proxy paid to its wallet", () => {
    const config = loadConfig({ env: { X402M_SOCIAL_PAY_TO: "0xABCDEF0123456789ABCDEF0123456789ABCDEF01" } });
    expect(config.social).toMatchObject({ provider: "archive", tokenSecret: null, cacheSeconds: 60 });
    expect(config.merchants.social).toMatchObject({ port: 8408 });
    expect(config.merchants["social-proxy"]).toEqual({
      payTo: "0xabcdef0123456789abcdef0123456789abcdef01",
      publicUrl: null,
      port: 8409,
      guidance: null,
      channelAuthorizerKey: null,
      receiptKey: null,
      solanaPayTo: null,
      builderCode: "x402m_social_proxy",
    });
  });

  it("reads the X sessions, query ids and twitterapi.io key, and names what a provider lacks", () => {
    const { social } = loadConfig({
      env: {
        X402M_SOCIAL_PROVIDER: "x-web",
        X402M_SOCIAL_X_ACCOUNTS: "aaa:111, bbb:222",
        X402M_SOCIAL_X_QUERY_IDS: "UserByScreenName=abc-1_X",
        X402M_SOCIAL_TIMEOUT_MS: "5000",
      },
    });
    expect(social.xWeb.accounts).toEqual([
      { authToken: "aaa", ct0: "111" },
      { authToken: "bbb", ct0: "222" },
    ]);
    expect(social.xWeb.queryIds).toEqual({ UserByScreenName: "abc-1_X" });
    expect(social.timeoutMs).toBe(5000);
    expect(refusal({ X402M_SOCIAL_PROVIDER: "x-web" })).toMatch(/X402M_SOCIAL_X_ACCOUNTS/);
    expect(refusal({ X402M_SOCIAL_PROVIDER: "x-web", X402M_SOCIAL_X_ACCOUNTS: "aaa" })).toMatch(
      /X402M_SOCIAL_X_ACCOUNTS/,
    );
    expect(refusal({ X402M_SOCIAL_PROVIDER: "twitterapi" })).toMatch(/X402M_SOCIAL_TWITTERAPI_KEY/);
    expect(refusal({ X402M_SOCIAL_PROVIDER: "scraper" })).toMatch(/X402M_SOCIAL_PROVIDER/);
    expect(refusal({ X402M_SOCIAL_TOKEN_SECRET: "short" })).toMatch(/X402M_SOCIAL_TOKEN_SECRET/);
    expect(refusal({ X402M_SOCIAL_X_QUERY_IDS: "UserByScreenName=a b" })).toMatch(/X402M_SOCIAL_X_QUERY_IDS/);
    expect(refusal({ X402M_SOCIAL_X_QUERY_IDS: "UserByName=abc" })).toMatch(
      /X402M_SOCIAL_X_QUERY_IDS: no X operation UserByName; known: .*UserByScreenName/,
    );
    expect(
      loadConfig({ env: { X402M_SOCIAL_PROVIDER: "twitterapi", X402M_SOCIAL_TWITTERAPI_KEY: "k" } }).social
        .twitterapi.key,
    ).toBe("k");
  });

  it("reads the x-web feature switches as booleans, refusing a switch X's web app does not send, naming it", () => {
    expect(loadConfig({ env: {} }).social.xWeb.features).toEqual({});
    const { features } = loadConfig({
      env: { X402M_SOCIAL_X_FEATURES: "articles_preview_enabled=false, rweb_video_screen_enabled = true" },
    }).social.xWeb;
    expect(features).toEqual({ articles_preview_enabled: false, rweb_video_screen_enabled: true });
    const unknown = refusal({
      X402M_SOCIAL_X_FEATURES: "articles_preview_enabled=true,artcles_preview_enabled=true",
    });
    expect(unknown).toMatch(
      /^invalid X402M_SOCIAL_X_FEATURES: no X feature switch artcles_preview_enabled\b/,
    );
    expect(unknown).not.toMatch(/\n/);
    expect(refusal({ X402M_SOCIAL_X_FEATURES: "articles_preview_enabled=yes" })).toBe(
      'invalid X402M_SOCIAL_X_FEATURES: articles_preview_enabled takes true or false, not "yes"',
    );
    expect(refusal({ X402M_SOCIAL_X_FEATURES: "articles_preview_enabled" })).toMatch(/takes true or false/);
  });
});
