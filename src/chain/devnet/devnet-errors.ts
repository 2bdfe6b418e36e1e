import { AppError } from "../../common/errors.ts";

/** An anvil that could not be started or set up. */
export class DevnetError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super(500, "devnet_failed", message, options);
  }
}

/** A saved chain anvil could not load (torn, or not a chain): the file is left as it was. */
export class SavedChainError extends DevnetError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`cannot load the saved chain ${file}: ${reason}`);
  }
}
