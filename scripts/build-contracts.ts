/**
 * Compiles `contracts/USDC.sol` and writes `src/chain/usdc.artifact.json` (`npm run build:contracts`).
 * Run it after changing the contract and commit both files; `test/chain/artifact.test.ts` fails until then.
 */
import fs from "node:fs";
import path from "node:path";
import { compileUsdc, renderArtifact, USDC_ARTIFACT } from "./contracts.ts";

const artifact = compileUsdc();
fs.writeFileSync(USDC_ARTIFACT, renderArtifact(artifact));
process.stdout.write(
  `wrote ${path.relative(process.cwd(), USDC_ARTIFACT)}: solc ${artifact.solcVersion}, ` +
    `runtime ${(artifact.deployedBytecode.length - 2) / 2} bytes, source sha256 ${artifact.sourceSha256}\n`,
);
