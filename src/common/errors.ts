import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The base of every error whose message is written for the person who ran the program or called the
 * API. Each carries its HTTP status and a stable machine `code`: over HTTP one handler turns it into
 * `{"error": {"code", "message"}}` (src/common/http.ts); on the command line its message is the one line
 * printed before a non-zero exit (src/cli/main.ts). Anything else is a bug, and is reported as one.
 */
export class AppError extends Error {
  /** Headers the HTTP answer carries (a 402's `PAYMENT-REQUIRED`, a 503's `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * What an HTTP caller is told when the message is for the operator only (it names the server's files):
   * the caller gets this, the log gets the message.
   */
  readonly publicMessage: string | undefined;
  /**
   * A refusal that came after the work it refuses had run (a page that used up its budget): not charged,
   * but a guarded call's payer is counted for it as for a failure (payments/paid-handler.ts).
   */
  readonly afterWork: boolean;

  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    options?: ErrorOptions & {
      headers?: Record<string, string>;
      publicMessage?: string;
      afterWork?: boolean;
    },
  ) {
    super(message, options);
    this.name = new.target.name;
    this.headers = options?.headers ?? {};
    this.publicMessage = options?.publicMessage;
    this.afterWork = options?.afterWork ?? false;
  }
}

/**
 * A mistake in how a command was called: one line on stderr and exit code 2. `code` is the API's when the
 * mistake was found by a service the command asked (`bad_address`), for callers that tell them apart.
 */
export class UsageError extends AppError {
  constructor(message: string, code = "usage") {
    super(400, code, message);
  }
}

export class BadInputError extends AppError {
  /**
   * @param param The input field at fault ("messages.0.content"), when one is: dialects that name it
   *   (OpenAI's `param`) say it.
   */
  constructor(
    message: string,
    code = "bad_request",
    readonly param?: string,
  ) {
    super(400, code, message);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, code = "not_found") {
    super(404, code, message);
  }
}

export function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/** The request conflicts with another one (e.g. a payment already in use by a concurrent request). */
export class ConflictError extends AppError {
  constructor(message: string, code = "conflict", options?: ConstructorParameters<typeof AppError>[3]) {
    super(409, code, message, options);
  }
}

/** Something the endpoint depends on (a provider, a fetched page) failed or timed out: never charged. */
export class UpstreamError extends AppError {
  constructor(
    message: string,
    code = "upstream_failed",
    status: 502 | 503 | 504 = 502,
    headers?: Record<string, string>,
  ) {
    super(status, code, message, { headers });
  }
}
