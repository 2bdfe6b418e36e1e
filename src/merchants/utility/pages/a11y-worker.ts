/** `/api/a11y/check`'s worker, run as a child process (`work.ts`): one audit per job (`a11y-engine.ts`). */
import { serveJobs } from "../job-runner.ts";
import { type AuditJob, auditHtml } from "./a11y-engine.ts";
import type { A11yReport } from "./a11y-report.ts";

serveJobs<AuditJob, A11yReport>(auditHtml);
