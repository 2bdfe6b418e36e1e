/** `/api/data/convert`'s worker, run as a child process (`convert.ts`): one conversion per job. */
import { serveJobs } from "../job-runner.ts";
import { type ConvertOptions, type ConvertResult, convert } from "./convert-engine.ts";

export interface ConvertJob {
  data: string;
  options: ConvertOptions;
}

serveJobs<ConvertJob, ConvertResult>(({ data, options }) => convert(data, options));
