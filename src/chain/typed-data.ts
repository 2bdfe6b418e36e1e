/**
 * viem's `hashTypedData`, the same bytes, for the typed data a merchant signs on every paid answer (the offer
 * receipt and the charge): flat structs of strings, unsigned integers, addresses, `bytes32` and booleans. viem
 * hashes the domain and the struct's type again for every message, and goes through its ABI encoder and hex
 * strings for every field: 0.3 ms of CPU a signature, about 4% of the serve process's per paid exact request
 * (docs/benchmarks-log.md, 2026-11-29, "the merchant's per-request path"). Here the domain separator and the type
 * hash are kept once computed, and so are the hashes of the strings that come again, and the fields are written
 * into one buffer hashed once.
 *
 * The data is checked first by viem's own `validateTypedData`, so what viem refuses is refused alike; anything
 * else (a nested struct, an array, `bytes`, a signed integer, `EIP712Domain` as the primary type) is hashed by
 * viem itself. `test/chain/typed-data.test.ts` compares both on random data.
 */
import {
  getTypesForEIP712Domain,
  type Hex,
  hashTypedData,
  keccak256,
  stringify,
  type TypedDataDefinition,
  toBytes,
  validateTypedData,
} from "viem";

type Field = { name: string; type: string };

/** The field types written here; any other goes to viem. */
const FLAT =
  /^(string|address|bool|bytes32|uint(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256)?)$/;

/** Kept type hashes and domain separators: a process signs for a handful of types and domains. */
const KEPT = 64;
const typeHashes = new Map<string, Uint8Array>();
const domainHashes = new Map<string, Uint8Array>();

const EIP712_PREFIX = new Uint8Array([0x19, 0x01]);

/** `hashTypedData(definition)`, as viem computes it (the module's comment). */
export function fastHashTypedData(definition: TypedDataDefinition): Hex {
  const {
    domain = {},
    message,
    primaryType,
  } = definition as {
    domain?: Record<string, unknown>;
    message: Record<string, unknown>;
    primaryType: string;
  };
  const given = definition.types as Record<string, readonly Field[]>;
  const fields = given[primaryType];
  const domainFields = getTypesForEIP712Domain({ domain }) as Field[];
  if (
    primaryType === "EIP712Domain" ||
    !fields ||
    Object.keys(given).length !== 1 ||
    "EIP712Domain" in given ||
    !canonical(fields, message) ||
    !canonical(domainFields, domain)
  )
    return hashTypedData(definition);
  // What viem checks before it hashes: the same errors for the same data.
  validateTypedData({
    domain,
    message,
    primaryType,
    types: { EIP712Domain: domainFields, ...given },
  } as TypedDataDefinition);
  const domainKey = stringify(domain);
  let separator = domainHashes.get(domainKey);
  if (!separator) {
    separator = structHash("EIP712Domain", domainFields, domain);
    remember(domainHashes, domainKey, separator);
  }
  const digest = new Uint8Array(66);
  digest.set(EIP712_PREFIX, 0);
  digest.set(separator, 2);
  digest.set(structHash(primaryType, fields, message), 34);
  return keccak256(digest);
}

/**
 * Whether every field is of a type written here and holds the kind of value it is written from (a string's text,
 * a boolean, an integer as a bigint or a number, an address or `bytes32` as hex): anything else, viem hashes (a
 * number given for a string, say, which viem encodes as the number's bytes).
 */
function canonical(fields: readonly Field[], data: Record<string, unknown>): boolean {
  return fields.every(({ name, type }) => {
    if (!FLAT.test(type)) return false;
    const value = data[name];
    if (type === "string" || type === "address" || type === "bytes32") return typeof value === "string";
    if (type === "bool") return typeof value === "boolean";
    return typeof value === "bigint" || (typeof value === "number" && Number.isSafeInteger(value));
  });
}

/** keccak256 of the type's hash and each field's 32-byte word (EIP-712's `hashStruct`, flat fields only). */
function structHash(name: string, fields: readonly Field[], data: Record<string, unknown>): Uint8Array {
  const encoded = new Uint8Array(32 * (fields.length + 1));
  encoded.set(typeHash(name, fields), 0);
  for (const [i, field] of fields.entries()) encoded.set(word(field.type, data[field.name]), 32 * (i + 1));
  return keccak256(encoded, "bytes");
}

function typeHash(name: string, fields: readonly Field[]): Uint8Array {
  const type = `${name}(${fields.map((f) => `${f.type} ${f.name}`).join(",")})`;
  let hash = typeHashes.get(type);
  if (!hash) {
    hash = keccak256(toBytes(type), "bytes");
    remember(typeHashes, type, hash);
  }
  return hash;
}

const encoder = new TextEncoder();

/** One field's 32-byte word, as viem's `encodeField` and ABI encoding write it. */
function word(type: string, value: unknown): Uint8Array {
  if (type === "string") return stringHash(value as string);
  const out = new Uint8Array(32);
  if (type === "bool") {
    out[31] = value ? 1 : 0;
    return out;
  }
  if (type === "bytes32") {
    out.set(hexBytes(value as string), 0);
    return out;
  }
  if (type === "address") {
    out.set(hexBytes(value as string), 12);
    return out;
  }
  // uintN: validated to fit by `validateTypedData` when a number or a bigint; big-endian, left-padded.
  let n = BigInt(value as bigint | number);
  if (n < 0n) throw new Error(`${type} cannot hold ${n}`);
  for (let i = 31; i >= 0 && n > 0n; i--) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  if (n > 0n) throw new Error(`${type} cannot hold ${String(value)}`);
  return out;
}

/**
 * A string field's word, its text's keccak256. Most of a paid answer's strings are the same from one answer to
 * the next (the network, the token, the wallets, the scheme, the amount, the resource): kept, they cost a lookup,
 * and the hash of the JavaScript keccak (about 20 µs each here) is paid for the settlement's transaction alone.
 */
function stringHash(text: string): Uint8Array {
  let hash = stringHashes.get(text);
  if (!hash) {
    hash = keccak256(encoder.encode(text), "bytes");
    if (text.length <= KEPT_STRING_LENGTH) remember(stringHashes, text, hash, KEPT_STRINGS);
  }
  return hash;
}

/** Strings whose hash is kept: as many as a host's buyers and routes, each no longer than a URL usually is. */
const KEPT_STRINGS = 1024;
const KEPT_STRING_LENGTH = 256;
const stringHashes = new Map<string, Uint8Array>();

function hexBytes(hex: string): Uint8Array {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(hex)) throw new Error(`not hex bytes: ${hex}`);
  return Buffer.from(hex.slice(2), "hex");
}

function remember(map: Map<string, Uint8Array>, key: string, value: Uint8Array, most = KEPT): void {
  if (map.size >= most) map.delete(map.keys().next().value as string);
  map.set(key, value);
}
