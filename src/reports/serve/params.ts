/** What a reader sends the report service (an address, an end block, a page), parsed, or a 400 saying what it should be. */
import { anyStoreAddress } from "../../chain/chains.ts";
import { BadInputError } from "../../common/errors.ts";

/** An EVM address in any case, or a Solana key (base58, case-sensitive). */
export const isAddress = (value: string): boolean => anyStoreAddress(value) !== undefined;

export const ADDRESS_FORMS = "0x followed by 40 hex digits, or a base58 public key (Solana)";

/** A merchant's address as the store keeps it (an EVM one lower-cased, a base58 key as written), or a 400. */
export function parseAddress(value: string): string {
  const address = anyStoreAddress(value);
  if (address === undefined)
    throw new BadInputError(`"${value}" is not an address: ${ADDRESS_FORMS}`, "bad_address");
  return address;
}

/** `value` as a whole number of at least `min`, else a 400 saying what it should be. */
function wholeParam(value: string, min: number, error: () => BadInputError): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) throw error();
  return Number(value);
}

export function endBlockParam(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  return wholeParam(
    value,
    0,
    () => new BadInputError(`end_block must be a block number, not "${value}"`, "bad_end_block"),
  );
}

export const pageParam = (value: string): number =>
  wholeParam(value, 1, () => new BadInputError(`a page is a number from 1, not "${value}"`, "bad_page"));

/** A leaderboard's page and size, as a caller in this process asks (the routes parse a reader's with `pageParam`). */
export function checkedBoardPage(page: number, size: number): void {
  if (!Number.isSafeInteger(page) || page < 1)
    throw new Error(`a leaderboard page is 1 or more, not ${page}`);
  if (!Number.isSafeInteger(size) || size < 1)
    throw new Error(`a leaderboard page holds 1 or more, not ${size}`);
}
