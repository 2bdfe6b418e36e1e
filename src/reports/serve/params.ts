/** What a reader sends the report service (an address, an end block, a page), parsed, or a 400 saying what it should be. */
import { BadInputError } from "../../common/errors.ts";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export const isAddress = (value: string): boolean => ADDRESS.test(value);

/** Lower-cases a merchant address, or rejects it as bad input. */
export function parseAddress(value: string): string {
  if (!isAddress(value))
    throw new BadInputError(`"${value}" is not an address: 0x followed by 40 hex digits`, "bad_address");
  return value.toLowerCase();
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
