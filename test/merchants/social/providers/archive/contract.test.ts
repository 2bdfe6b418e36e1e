/** The archive keeps the provider contract, on every database kind, loaded with the world through its import. */
import { DATABASE_KINDS } from "../../../../helpers/db.ts";
import { providerContract } from "../../contract.ts";
import { archiveOfWorld } from "./helpers.ts";

for (const kind of DATABASE_KINDS) {
  providerContract(`archive (${kind})`, () => archiveOfWorld(kind));
}
