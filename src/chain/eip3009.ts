/**
 * The EIP-712 digest an EIP-3009 `TransferWithAuthorization` is signed over, computed directly: viem's
 * `hashTypedData` validates and encodes the types on every call, which costs more than the hashing on a
 * path that runs once per paid request. `test/chain/eip3009.test.ts` checks it equals `hashTypedData`.
 */
import { type Address, concat, type Hex, keccak256, pad, toHex } from "viem";

/** All four fields, name and version non-empty: viem leaves an empty one out of the domain's type. */
export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

export interface TransferWithAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

const DOMAIN_TYPEHASH = keccak256(
  toHex("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
);
const TRANSFER_TYPEHASH = keccak256(
  toHex(
    "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)",
  ),
);

/** A few tokens' separators are kept: a facilitator settles a handful of assets. */
const MAX_DOMAINS = 64;
const separators = new Map<string, Hex>();

function domainSeparator(domain: Eip712Domain): Hex {
  const key = JSON.stringify([
    domain.name,
    domain.version,
    domain.chainId,
    domain.verifyingContract.toLowerCase(),
  ]);
  let separator = separators.get(key);
  if (!separator) {
    separator = keccak256(
      concat([
        DOMAIN_TYPEHASH,
        keccak256(toHex(domain.name)),
        keccak256(toHex(domain.version)),
        word(BigInt(domain.chainId)),
        pad(domain.verifyingContract),
      ]),
    );
    if (separators.size >= MAX_DOMAINS) separators.clear();
    separators.set(key, separator);
  }
  return separator;
}

const word = (value: bigint): Hex => toHex(value, { size: 32 });

/** keccak256(0x1901 || domainSeparator || hashStruct(message)), as EIP-712 defines it. */
export function transferWithAuthorizationDigest(
  domain: Eip712Domain,
  message: TransferWithAuthorization,
): Hex {
  const structHash = keccak256(
    concat([
      TRANSFER_TYPEHASH,
      pad(message.from),
      pad(message.to),
      word(message.value),
      word(message.validAfter),
      word(message.validBefore),
      message.nonce,
    ]),
  );
  return keccak256(concat(["0x1901", domainSeparator(domain), structHash]));
}
