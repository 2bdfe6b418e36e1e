import { twitterApiProvider } from "../../../../../src/merchants/social/providers/twitterapi/index.ts";
import { providerContract } from "../../contract.ts";
import { FAKE_API_KEY, startFakeTwitterApi } from "./fake-twitterapi.ts";

providerContract(
  "twitterapi",
  async () => {
    const fake = await startFakeTwitterApi();
    const provider = twitterApiProvider({ apiKey: FAKE_API_KEY, baseUrl: fake.url, timeoutMs: 5_000 });
    return { provider, close: fake.close };
  },
  { sessions: false, listLookup: false },
);
