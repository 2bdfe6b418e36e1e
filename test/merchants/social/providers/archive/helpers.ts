/** An archive provider on a fresh test database of each kind, loaded with records. */
import type { Database, DatabaseKind } from "../../../../../src/common/db/index.ts";
import type { SocialProvider } from "../../../../../src/merchants/social/provider.ts";
import {
  type ArchiveRecord,
  type ArchiveRecordInput,
  archiveProvider,
  archiveRecord,
  importArchive,
} from "../../../../../src/merchants/social/providers/archive/index.ts";
import { openTestDatabase } from "../../../../helpers/db.ts";
import { worldArchiveRecords } from "../../world.ts";

export interface ArchiveSubject {
  db: Database;
  provider: SocialProvider;
  close: () => Promise<void>;
}

/** Records as a JSONL file would give them: checked and completed with their defaults. */
export const complete = (records: readonly ArchiveRecordInput[]): ArchiveRecord[] =>
  records.map((r, i) => archiveRecord(r, i + 1));

export async function archiveWith(
  kind: DatabaseKind,
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
): Promise<ArchiveSubject> {
  const test = await openTestDatabase(kind);
  await importArchive(test.db, records);
  return { db: test.db, provider: archiveProvider(test.db), close: test.close };
}

export const archiveOfWorld = (kind: DatabaseKind) => archiveWith(kind, complete(worldArchiveRecords()));
