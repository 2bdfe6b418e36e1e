export { type TwitterApiProviderOptions, twitterApiProvider } from "./provider.ts";
export { loginCookies } from "./upload.ts";
