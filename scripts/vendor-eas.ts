/**
 * Writes `src/chain/eas/artifacts/{EAS,SchemaRegistry}.json` from an unpacked
 * `@ethereum-attestation-service/eas-contracts` package: each contract's creation bytecode exactly as
 * published, with where it came from. The package is not a dependency (it depends on hardhat); fetch it
 * with `npm pack` instead:
 *
 *   cd "$(mktemp -d)" && npm pack @ethereum-attestation-service/eas-contracts@1.9.0 && tar xzf *.tgz
 *   npx tsx scripts/vendor-eas.ts "$PWD/package"   # run from the repository
 *
 * It prints the sha256 of each original artifact for the folder's README; the ABI is in
 * `src/chain/eas/abi.ts`, by hand, so check it against the new artifact's after a version change.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CONTRACTS = ["EAS", "SchemaRegistry"] as const;
const PACKAGE_NAME = "@ethereum-attestation-service/eas-contracts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const target = path.join(root, "src", "chain", "eas", "artifacts");

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: tsx scripts/vendor-eas.ts <unpacked eas-contracts package directory>\n");
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as {
  name: string;
  version: string;
};
if (manifest.name !== PACKAGE_NAME) throw new Error(`${dir} holds ${manifest.name}, not ${PACKAGE_NAME}`);

for (const name of CONTRACTS) {
  const file = path.join(dir, "artifacts", "contracts", `${name}.sol`, `${name}.json`);
  const bytes = fs.readFileSync(file);
  const published = JSON.parse(bytes.toString("utf8")) as {
    contractName: string;
    sourceName: string;
    bytecode: string;
    linkReferences: Record<string, unknown>;
  };
  // Linked libraries would leave placeholders in the bytecode that no eth_call can run.
  if (Object.keys(published.linkReferences).length > 0) throw new Error(`${name} needs linked libraries`);
  const vendored = {
    contractName: published.contractName,
    sourceName: published.sourceName,
    package: `${manifest.name}@${manifest.version}`,
    bytecode: published.bytecode,
  };
  const out = path.join(target, `${name}.json`);
  fs.writeFileSync(out, `${JSON.stringify(vendored, null, 2)}\n`);
  const sha256 = crypto.createHash("sha256").update(bytes).digest("hex");
  process.stdout.write(
    `wrote ${path.relative(root, out)}: creation code ${(published.bytecode.length - 2) / 2} bytes, ` +
      `from ${path.relative(dir, file)} (sha256 ${sha256})\n`,
  );
}
