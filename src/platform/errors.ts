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
