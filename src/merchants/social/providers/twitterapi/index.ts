export { loginCookies, type TwitterApiProviderOptions, twitterApiProvider } from "./provider.ts";
