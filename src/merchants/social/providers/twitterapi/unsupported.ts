import { AppError } from "../../../../common/errors.ts";

/** What twitterapi.io cannot do here: a 501, before anything is charged. */
export function unsupported(what: string): AppError {
  return new AppError(
    501,
    "unsupported",
    `the twitterapi provider of this server cannot ${what}; nothing was charged`,
  );
}
