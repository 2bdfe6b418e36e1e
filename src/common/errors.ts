import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The few error types the service raises on purpose. Each carries its HTTP status and a stable
 * machine `code`; one handler turns them into `{"error": {"code", "message"}}`.
 */
export class AppError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadInputError extends AppError {
  constructor(message: string, code = "bad_request") {
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
  constructor(message: string, code = "conflict") {
    super(409, code, message);
  }
}

/** Something the endpoint depends on (a provider, a fetched page) failed or timed out: never charged. */
export class UpstreamError extends AppError {
  constructor(message: string, code = "upstream_failed", status: 502 | 503 | 504 = 502) {
    super(status, code, message);
  }
}
