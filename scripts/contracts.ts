/**
 * Compiles `contracts/USDC.sol` offline with solc-js (the compiler is the WebAssembly build inside the
 * pinned `solc` package; nothing is downloaded). `npm run build:contracts` writes the result to
 * `src/chain/usdc.artifact.json`; a test recompiles and checks the committed artifact is exactly that.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The source as the compiler sees it: the key is part of the metadata hash, so it is fixed. */
export const USDC_SOURCE_NAME = "contracts/USDC.sol";
export const USDC_SOURCE = path.join(root, USDC_SOURCE_NAME);
export const USDC_ARTIFACT = path.join(root, "src", "chain", "usdc.artifact.json");

/**
 * Fixed so the bytecode is a function of the source alone. `cancun` runs on Base (which has every
 * Cancun opcode) and on anvil's Prague; a newer default of a later solc must not change the output.
 */
export const COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
} as const;

/**
 * Storage slots the devnet writes or reads directly (each variable alone at the start of its slot);
 * the build checks the compiler agrees.
 */
export const EXPECTED_SLOTS = {
  owner: 0,
  totalSupply: 1,
  balanceOf: 2,
  allowance: 3,
  _authorizationStates: 4,
} as const;

export interface UsdcArtifact {
  contractName: "USDC";
  source: string;
  sourceSha256: string;
  solcVersion: string;
  settings: typeof COMPILER_SETTINGS;
  storageSlots: Record<string, number>;
  abi: unknown[];
  /** Creation code (runs the constructor, which makes the deployer the owner). */
  bytecode: `0x${string}`;
  /** Runtime code: what `anvil_setCode` installs at the canonical address. */
  deployedBytecode: `0x${string}`;
}

interface SolcOutput {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<
      string,
      {
        abi: unknown[];
        evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
        storageLayout: { storage: { label: string; slot: string; offset: number }[] };
      }
    >
  >;
}

export function sha256(text: string | Buffer): string {
  return crypto.createHash("sha256").update(text).digest("hex");
}

/** Compiles the token; throws on any compiler error or warning (a warning here is a bug to fix). */
export function compileUsdc(source: string = fs.readFileSync(USDC_SOURCE, "utf8")): UsdcArtifact {
  const input = {
    language: "Solidity",
    sources: { [USDC_SOURCE_NAME]: { content: source } },
    settings: {
      ...COMPILER_SETTINGS,
      outputSelection: {
        [USDC_SOURCE_NAME]: {
          USDC: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "storageLayout"],
        },
      },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const problems = (output.errors ?? []).filter((e) => e.severity !== "info");
  if (problems.length > 0) {
    throw new Error(`solc ${solc.version()}:\n${problems.map((e) => e.formattedMessage).join("\n")}`);
  }
  const contract = output.contracts?.[USDC_SOURCE_NAME]?.USDC;
  if (!contract) throw new Error("solc returned no USDC contract");

  const storageSlots = Object.fromEntries(
    contract.storageLayout.storage.map((s) => [s.label, s.offset === 0 ? Number(s.slot) : Number.NaN]),
  );
  for (const [label, slot] of Object.entries(EXPECTED_SLOTS)) {
    if (storageSlots[label] !== slot) {
      throw new Error(
        `USDC storage moved: ${label} is at slot ${storageSlots[label]}, the devnet expects ${slot}`,
      );
    }
  }

  return {
    contractName: "USDC",
    source: USDC_SOURCE_NAME,
    sourceSha256: sha256(source),
    solcVersion: solc.version(),
    settings: COMPILER_SETTINGS,
    storageSlots,
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
  };
}

/** The artifact file's exact text (2-space JSON and a final newline, as the formatter keeps it). */
export function renderArtifact(artifact: UsdcArtifact): string {
  return `${JSON.stringify(artifact, null, 2)}\n`;
}
