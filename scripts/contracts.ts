/**
 * Compiles the devnet's contracts (`contracts/*.sol`) offline with solc-js (the compiler is the
 * WebAssembly build inside the pinned `solc` package; nothing is downloaded). `npm run build:contracts`
 * writes each to its `src/chain/*.artifact.json`; a test recompiles and checks each committed artifact is
 * exactly that.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** One contract: its source (the key is part of the metadata hash, so it is fixed) and its artifact. */
export interface ContractSpec {
  contractName: string;
  sourceName: string;
  source: string;
  artifact: string;
  /**
   * Storage slots the devnet writes or reads directly (each variable alone at the start of its slot);
   * the build checks the compiler agrees.
   */
  expectedSlots: Record<string, number>;
}

function spec(
  contractName: string,
  artifactName: string,
  expectedSlots: Record<string, number>,
): ContractSpec {
  const sourceName = `contracts/${contractName}.sol`;
  return {
    contractName,
    sourceName,
    source: path.join(root, sourceName),
    artifact: path.join(root, "src", "chain", `${artifactName}.artifact.json`),
    expectedSlots,
  };
}

export const USDC_CONTRACT = spec("USDC", "usdc", {
  owner: 0,
  totalSupply: 1,
  balanceOf: 2,
  allowance: 3,
  _authorizationStates: 4,
  nonces: 5,
});
/** Permit2's nonce bitmap starts empty at slot 0; nothing else is stored. */
export const PERMIT2_CONTRACT = spec("Permit2", "permit2", { nonceBitmap: 0 });
/** Stateless but for a transient lock: nothing for the devnet to write. */
export const UPTO_PROXY_CONTRACT = spec("X402UptoPermit2Proxy", "upto-proxy", {});
export const MULTICALL3_CONTRACT = spec("Multicall3", "multicall3", {});
/** Stateless but for a transient lock, like the upto proxy. */
export const EXACT_PROXY_CONTRACT = spec("X402ExactPermit2Proxy", "exact-proxy", {});
/** The channels live in its mappings, which only its own functions write. */
export const BATCH_SETTLEMENT_CONTRACT = spec("X402BatchSettlement", "batch-settlement", {});
/** The batch-settlement deposit collectors: stateless. */
export const ERC3009_COLLECTOR_CONTRACT = spec("ERC3009DepositCollector", "erc3009-deposit-collector", {});
export const PERMIT2_COLLECTOR_CONTRACT = spec("Permit2DepositCollector", "permit2-deposit-collector", {});
/** Every contract `npm run build:contracts` compiles, in a fixed order. */
export const CONTRACTS = [
  USDC_CONTRACT,
  PERMIT2_CONTRACT,
  UPTO_PROXY_CONTRACT,
  MULTICALL3_CONTRACT,
  EXACT_PROXY_CONTRACT,
  BATCH_SETTLEMENT_CONTRACT,
  ERC3009_COLLECTOR_CONTRACT,
  PERMIT2_COLLECTOR_CONTRACT,
] as const;

export const USDC_SOURCE_NAME = USDC_CONTRACT.sourceName;
export const USDC_SOURCE = USDC_CONTRACT.source;
export const USDC_ARTIFACT = USDC_CONTRACT.artifact;

/**
 * Fixed so the bytecode is a function of the source alone. `cancun` runs on Base (which has every
 * Cancun opcode) and on anvil's Prague; a newer default of a later solc must not change the output.
 */
export const COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
} as const;

export interface ContractArtifact {
  contractName: string;
  source: string;
  sourceSha256: string;
  solcVersion: string;
  settings: typeof COMPILER_SETTINGS;
  storageSlots: Record<string, number>;
  abi: unknown[];
  /** Creation code (runs the constructor, if any: the USDC's makes the deployer the owner). */
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

/** Compiles one contract; throws on any compiler error or warning (a warning here is a bug to fix). */
export function compileContract(
  spec: ContractSpec,
  source: string = fs.readFileSync(spec.source, "utf8"),
): ContractArtifact {
  const { contractName, sourceName } = spec;
  const input = {
    language: "Solidity",
    sources: { [sourceName]: { content: source } },
    settings: {
      ...COMPILER_SETTINGS,
      outputSelection: {
        [sourceName]: {
          [contractName]: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "storageLayout"],
        },
      },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const problems = (output.errors ?? []).filter((e) => e.severity !== "info");
  if (problems.length > 0) {
    throw new Error(`solc ${solc.version()}:\n${problems.map((e) => e.formattedMessage).join("\n")}`);
  }
  const contract = output.contracts?.[sourceName]?.[contractName];
  if (!contract) throw new Error(`solc returned no ${contractName} contract`);

  const storageSlots = Object.fromEntries(
    contract.storageLayout.storage.map((s) => [s.label, s.offset === 0 ? Number(s.slot) : Number.NaN]),
  );
  for (const [label, slot] of Object.entries(spec.expectedSlots)) {
    if (storageSlots[label] !== slot) {
      throw new Error(
        `${contractName} storage moved: ${label} is at slot ${storageSlots[label]}, the devnet expects ${slot}`,
      );
    }
  }

  return {
    contractName,
    source: sourceName,
    sourceSha256: sha256(source),
    solcVersion: solc.version(),
    settings: COMPILER_SETTINGS,
    storageSlots,
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
  };
}

/** Compiles the token (`contracts/USDC.sol`). */
export function compileUsdc(source?: string): ContractArtifact {
  return compileContract(USDC_CONTRACT, source);
}

/** The artifact file's exact text (2-space JSON and a final newline, as the formatter keeps it). */
export function renderArtifact(artifact: ContractArtifact): string {
  return `${JSON.stringify(artifact, null, 2)}\n`;
}
