/** The x-web provider against a fake X on 127.0.0.1 serving the world in X's web GraphQL wire format. */
import { xWebProvider } from "../../../../../src/merchants/social/providers/x-web/index.ts";
import { providerContract } from "../../contract.ts";
import { startFakeX } from "./fake-x.ts";

const ACCOUNTS = [
  { authToken: "f".repeat(40), ct0: "e".repeat(32) },
  { authToken: "d".repeat(40), ct0: "c".repeat(32) },
];

providerContract("x-web", async () => {
  const fake = await startFakeX({ tokens: ACCOUNTS.map((a) => a.authToken) });
  const provider = xWebProvider({
    baseUrl: fake.url,
    uploadUrl: fake.url,
    accounts: ACCOUNTS,
    timeoutMs: 10_000,
  });
  return { provider, close: () => fake.close() };
});
