/**
 * The weekly reports: built in SQL (week/), drawn as pages, badges and datasets (render/), served over
 * HTTP and MCP (serve/), and published as a static site (publish/). See docs/report.md. What the rest of
 * the program uses of them is here.
 */

export { Attester, type AttesterOptions } from "./attest/attester.ts";
export { checkSealedWeeks } from "./attest/check.ts";
export { type Verified, VerifyError, type VerifyFailure, verifyReport } from "./attest/verify.ts";
export { WeekCloses } from "./attest/weeks.ts";
export type {
  EvidenceDocument,
  FlagFeedDocument,
  LeaderboardDocument,
  MerchantDocuments,
  ReportWindow,
  SealedWeeksDocument,
  SearchDocument,
  WalletHistory,
} from "./model.ts";
export { type Manifest, publishSite, type SiteSource } from "./publish/publish.ts";
export { RANKING_PAGE_SIZE } from "./render/home-page.ts";
export { documentShell, noticeBanner } from "./render/shell.ts";
export type { Report } from "./schema.ts";
export { THRESHOLDS } from "./screens/index.ts";
export { chainsWithData } from "./serve/across.ts";
export { type ReportRoutesOptions, reportRoutes } from "./serve/http.ts";
export { type ChainAnswers, type ReportAnswers, reportMcpServer } from "./serve/mcp.ts";
export { ADDRESS_FORMS, isAddress } from "./serve/params.ts";
export { reportReadiness, type ServiceHealth } from "./serve/readiness.ts";
export { flagFeedDocument, walletsRoot } from "./serve/routes/flags.ts";
export { leaderboardDocument, leaderboardPath } from "./serve/routes/leaderboard.ts";
export { searchPath } from "./serve/routes/search.ts";
export { ReportService } from "./serve/service.ts";
export type { ReportServiceOptions } from "./serve/windows.ts";
export { FLAGS_PATH, flagsPath } from "./week/flags.ts";
export { LICENSE_URL } from "./week/report.ts";
export { resolveWindow } from "./week/window.ts";
