/**
 * The key a merchant host signs its offers and receipts with (docs/platform.md, "Signed offers and receipts"):
 * `X402M_<HOST>_RECEIPT_KEY`, or the file `X402M_<HOST>_RECEIPT_KEY_FILE` names; else one generated once and
 * kept in the data directory (`keys/receipts-<host>.key`), so that every merchant signs out of the box and
 * its signer stays the same across restarts: a buyer that has pinned it keeps verifying.
 *
 * Not its wallet's key: the wallet (`PAY_TO`) only receives, and its key need not be on the server at all. A
 * signing key that leaks signs receipts, not transfers: replace it, and tell buyers the new address.
 */
import fs from "node:fs";
import path from "node:path";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { log } from "../../../common/log.ts";
import { type Env, PRIVATE_KEY, readKeySetting } from "../../../config/values.ts";

/** A private key as the settings take it: 32 bytes in hex, 0x-prefixed. */
export const RECEIPT_KEY = PRIVATE_KEY;

/**
 * A host's receipt key from the environment: `<prefix>RECEIPT_KEY` or its `_FILE` (`readKeySetting`); else
 * its source host's (`fallbackPrefix`: an alias host answers for its source, with its wallet, and signs as
 * it does). Null: none set.
 */
export function readReceiptKey(env: Env, prefix: string, fallbackPrefix?: string): string | null {
  return readKeySetting(env, `${prefix}RECEIPT_KEY`, fallbackPrefix && `${fallbackPrefix}RECEIPT_KEY`);
}

/** Where a host's generated receipt key is kept. */
export function receiptKeyFile(dataDir: string, host: string): string {
  return path.join(dataDir, "keys", `receipts-${host}.key`);
}

/**
 * The key kept for `host` in the data directory, made on first use (readable by its owner alone). Two
 * processes starting at once keep the first one's. Undefined when it can be neither read nor written (a
 * read-only directory): the host then signs nothing, and says so, rather than not starting.
 */
export function storedReceiptKey(dataDir: string, host: string): `0x${string}` | undefined {
  const file = receiptKeyFile(dataDir, host);
  try {
    if (!fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const key = generatePrivateKey();
      // Written aside and linked into place: another process sees no file or a whole one, never half of one.
      const aside = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(aside, `${key}\n`, { mode: 0o600 });
      try {
        fs.linkSync(aside, file);
        log("info", "a receipt key was generated for the host: keep it with the data directory", {
          host,
          file,
          signer: privateKeyToAccount(key).address,
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      } finally {
        fs.rmSync(aside, { force: true });
      }
    }
    const content = fs.readFileSync(file, "utf8").trim();
    if (!RECEIPT_KEY.test(content)) throw new Error(`${file} does not hold a 32-byte private key in hex`);
    return content as `0x${string}`;
  } catch (error) {
    log("warn", "the host signs no offers or receipts: its receipt key can be neither read nor made", {
      host,
      file,
      error: String(error),
    });
    return undefined;
  }
}
