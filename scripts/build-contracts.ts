/**
 * Compiles every contract in `contracts/` the devnet installs and writes each artifact beside the others
 * in `src/chain/` (`npm run build:contracts`). Run it after changing a contract and commit both files;
 * `test/chain/artifact.test.ts` fails until then.
 */
import fs from "node:fs";
import path from "node:path";
import { CONTRACTS, compileContract, renderArtifact } from "./contracts.ts";

for (const spec of CONTRACTS) {
  const artifact = compileContract(spec);
  fs.writeFileSync(spec.artifact, renderArtifact(artifact));
  process.stdout.write(
    `wrote ${path.relative(process.cwd(), spec.artifact)}: solc ${artifact.solcVersion}, ` +
      `runtime ${(artifact.deployedBytecode.length - 2) / 2} bytes, source sha256 ${artifact.sourceSha256}\n`,
  );
}
