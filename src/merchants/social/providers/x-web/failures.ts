/** What X's GraphQL errors mean when an answer lacks the wanted object: not found, or trouble to report. */
import { UpstreamError } from "../../../../common/errors.ts";
import { type GraphQLAnswer, PROVIDER } from "./client.ts";
import type { Operation } from "./operations.ts";

/** X's error codes and messages that mean "not there", not trouble. */
export function isNotFound(error: { message: string; code?: number }): boolean {
  return (
    error.code === 144 ||
    error.code === 34 ||
    error.code === 50 ||
    error.code === 63 ||
    /_Missing|No status found|not found|does not exist|Unknown (user|list|community)/i.test(error.message)
  );
}

/** What an answer without the wanted object means: `null` (not found), or a 502 when X said why. */
export function absent(answer: GraphQLAnswer, operation: Operation): null {
  const trouble = answer.errors.find((e) => !isNotFound(e));
  if (trouble)
    throw new UpstreamError(
      `the ${PROVIDER} answered ${operation} with an error${trouble.message ? `: ${trouble.message}` : ""}`,
      "upstream_failed",
    );
  return null;
}

export function noTimeline(operation: Operation): UpstreamError {
  return new UpstreamError(`the ${PROVIDER} answered ${operation} without its timeline`, "upstream_invalid");
}
