import { SOLANA_ADDRESS } from "../constants.ts";

/** A JSON-RPC error with the validator's code (-32602 bad params, -32601 no such method, -32002 preflight...). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const invalidParams = (message: string) => new RpcError(-32602, `Invalid params: ${message}`);

/** Positional params as the validator reads them: a list, its optional trailing config an object. */
export class Params {
  constructor(private readonly list: unknown[]) {}

  static of(params: unknown): Params {
    if (params === undefined || params === null) return new Params([]);
    if (!Array.isArray(params)) throw invalidParams("params must be an array");
    return new Params(params);
  }

  address(index: number, name: string): string {
    const value = this.list[index];
    if (typeof value !== "string" || !SOLANA_ADDRESS.test(value))
      throw invalidParams(`${name} must be a base58 address`);
    return value;
  }

  string(index: number, name: string): string {
    const value = this.list[index];
    if (typeof value !== "string" || value === "") throw invalidParams(`${name} must be a string`);
    return value;
  }

  stringList(index: number, name: string, max: number): string[] {
    const value = this.list[index];
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
      throw invalidParams(`${name} must be a list of strings`);
    }
    if (value.length > max) throw invalidParams(`${name} lists more than ${max}`);
    return value as string[];
  }

  integer(index: number, name: string): bigint {
    const value = this.list[index];
    if (typeof value === "bigint" && value >= 0n) return value;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw invalidParams(`${name} must be a whole number`);
    }
    return BigInt(value);
  }

  config(index: number): Config {
    const value = this.list[index];
    if (value === undefined || value === null) return new Config({});
    if (typeof value !== "object" || Array.isArray(value))
      throw invalidParams("the configuration must be an object");
    return new Config(value as Record<string, unknown>);
  }

  object(index: number, name: string): Record<string, unknown> {
    const value = this.list[index];
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw invalidParams(`${name} must be an object`);
    return value as Record<string, unknown>;
  }
}

export class Config {
  constructor(readonly values: Record<string, unknown>) {}

  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const value = this.values[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== "string" || !allowed.includes(value as T)) {
      throw invalidParams(`${key} must be one of ${allowed.join(", ")}`);
    }
    return value as T;
  }

  flag(key: string, fallback: boolean): boolean {
    const value = this.values[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== "boolean") throw invalidParams(`${key} must be true or false`);
    return value;
  }

  optionalString(key: string): string | undefined {
    const value = this.values[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string") throw invalidParams(`${key} must be a string`);
    return value;
  }

  optionalInteger(key: string): number | undefined {
    const value = this.values[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "bigint") return Number(value);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
      throw invalidParams(`${key} must be a whole number`);
    return value;
  }
}

export const COMMITMENTS = ["processed", "confirmed", "finalized"] as const;
