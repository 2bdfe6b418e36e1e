/** The zod shapes of the EVM values a payment payload carries, shared by every scheme's payload schemas. */
import { z } from "zod";

export const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an 0x-prefixed 20-byte address");
export const bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "an 0x-prefixed 32 bytes");
export const uint256 = z
  .string()
  .regex(/^\d{1,78}$/, "a decimal integer string")
  .refine((v) => BigInt(v) < 2n ** 256n, "at most 2^256 - 1");
// 65-byte ECDSA, or longer for smart wallets (ERC-1271 / ERC-6492).
export const signature = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2}){65,}$/, "an 0x-prefixed signature of at least 65 bytes");
