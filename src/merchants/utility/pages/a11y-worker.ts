/** The worker thread side of `/api/a11y/check`: one audit per job (`a11y-engine.ts`). */
import { serveJobs } from "../job-thread.ts";
import { type AuditJob, auditHtml } from "./a11y-engine.ts";
import type { A11yReport } from "./a11y-report.ts";

serveJobs<AuditJob, A11yReport>(auditHtml);
