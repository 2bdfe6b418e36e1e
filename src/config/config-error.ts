import { AppError } from "../common/errors.ts";

/** A setting refused: its message names the flag or environment variable to change. */
export class ConfigError extends AppError {
  constructor(message: string) {
    super(500, "bad_configuration", message);
  }
}
