/**
 * The archive provider of the social-data merchant: X's data served from PostgreSQL full-text search in
 * the host's database. The offline default and the demo's data (a synthetic X from `generateCorpus`, or an
 * export imported with `importArchive` from the JSONL lines `parseArchiveLine` reads).
 */
export { type CorpusOptions, corpusSessionToken, generateCorpus } from "./corpus.ts";
export { ArchiveConflictError, type ImportCounts, type ImportOptions, importArchive } from "./import.ts";
export { ARCHIVE_PROVIDER, archiveProvider, archiveSetup } from "./provider.ts";
export {
  ARCHIVE_KINDS,
  type ArchiveKind,
  ArchiveLineError,
  type ArchiveRecord,
  type ArchiveRecordInput,
  archiveLines,
  archiveRecord,
  parseArchiveLine,
} from "./records.ts";
export { ARCHIVE_MODULE, ARCHIVE_TABLES } from "./tables.ts";
