/**
 * EAS and its SchemaRegistry on a devnet, at Base's predeploy addresses: a schema registered and an
 * attestation made under it with the project's ABIs, as the weekly attester will. One devnet for the file,
 * mined on demand (one sender, so each transaction is sent, then mined, then its receipt read). The schema
 * and the attestation are made once, by whichever test needs them first, so that each test runs alone too.
 */
import {
  type Address,
  createTestClient,
  domainSeparator,
  encodeAbiParameters,
  type Hex,
  http,
  parseAbi,
  parseAbiParameters,
  parseEventLogs,
  zeroAddress,
  zeroHash,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_CHAIN_ID } from "../../src/chain/base.ts";
import { type Devnet, startDevnet } from "../../src/chain/devnet/index.ts";
import {
  EAS_ADDRESS,
  easAbi,
  installEas,
  SCHEMA_REGISTRY_ADDRESS,
  schemaRegistryAbi,
  schemaUid,
} from "../../src/chain/eas/index.ts";
import { easOn, once } from "../helpers/eas.ts";

const SCHEMA = "uint64 endBlock,string methodology,bytes32 reportsRoot";
const DATA = encodeAbiParameters(parseAbiParameters(SCHEMA), [
  302_400n,
  "screens-v1",
  `0x${"ab".repeat(32)}`,
]);
/** What the constructors left in immutables, read through getters the project's ABI does not carry. */
const constructed = parseAbi([
  "function getSchemaRegistry() view returns (address)",
  "function getDomainSeparator() view returns (bytes32)",
  "function version() view returns (string)",
]);

let devnet: Devnet;
let eas: ReturnType<typeof easOn>;
let client: ReturnType<typeof easOn>["client"];
let wallet: ReturnType<typeof easOn>["wallet"];
let attester: Address;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
  eas = easOn(devnet, (devnet.buyers[0] as { privateKey: Hex }).privateKey);
  ({ client, wallet } = eas);
  attester = wallet.account.address;
});
afterAll(() => devnet?.stop());

const isValid = (uid: Hex) =>
  client.readContract({ address: EAS_ADDRESS, abi: easAbi, functionName: "isAttestationValid", args: [uid] });

const codes = () =>
  Promise.all([
    client.getCode({ address: SCHEMA_REGISTRY_ADDRESS }),
    client.getCode({ address: EAS_ADDRESS }),
  ]);

const SCHEMA_UID = schemaUid(SCHEMA, zeroAddress, false);
const register = {
  address: SCHEMA_REGISTRY_ADDRESS,
  abi: schemaRegistryAbi,
  functionName: "register",
  args: [SCHEMA, zeroAddress, false],
} as const;

/** The schema registered: what a call would have returned, and the receipt. */
const registration = once(async () => {
  const { result } = await client.simulateContract({ ...register, account: attester });
  return { result, receipt: await eas.mined(wallet.writeContract(register)) };
});

/** An attestation under the schema: its receipt and UID. */
const attestation = once(async () => {
  await registration();
  const request = {
    schema: SCHEMA_UID,
    data: {
      recipient: zeroAddress,
      expirationTime: 0n,
      revocable: false,
      refUID: zeroHash,
      data: DATA,
      value: 0n,
    },
  };
  const receipt = await eas.mined(
    wallet.writeContract({ address: EAS_ADDRESS, abi: easAbi, functionName: "attest", args: [request] }),
  );
  const [attested] = parseEventLogs({ abi: easAbi, eventName: "Attested", logs: receipt.logs });
  return { receipt, attested, uid: attested?.args.uid as Hex };
});

describe("EAS on the devnet", () => {
  it("sits at Base's predeploys, constructed for them", async () => {
    const [registryCode, easCode] = await codes();
    expect(registryCode?.length).toBeGreaterThan(2);
    expect(easCode?.length).toBeGreaterThan(2);
    const read = (functionName: "getSchemaRegistry" | "getDomainSeparator" | "version", address: Address) =>
      client.readContract({ address, abi: constructed, functionName });
    expect(await read("getSchemaRegistry", EAS_ADDRESS)).toBe(SCHEMA_REGISTRY_ADDRESS);
    expect(await read("version", EAS_ADDRESS)).toBe("1.4.0");
    expect(await read("version", SCHEMA_REGISTRY_ADDRESS)).toBe("1.4.0");
    // The constructor ran at another address; delegated attestations must still sign for this one.
    expect(await read("getDomainSeparator", EAS_ADDRESS)).toBe(
      domainSeparator({
        domain: { name: "EAS", version: "1.4.0", chainId: BASE_CHAIN_ID, verifyingContract: EAS_ADDRESS },
      }),
    );
  });

  it("registers a schema under the UID schemaUid predicts", async () => {
    const uid = SCHEMA_UID;
    const { result, receipt } = await registration();
    expect(result).toBe(uid);
    const [registered] = parseEventLogs({
      abi: schemaRegistryAbi,
      eventName: "Registered",
      logs: receipt.logs,
    });
    expect(registered?.args.uid).toBe(uid);
    expect(registered?.args.registerer).toBe(attester);
    const record = { uid, resolver: zeroAddress, revocable: false, schema: SCHEMA };
    expect(registered?.args.schema).toEqual(record);
    expect(
      await client.readContract({
        address: SCHEMA_REGISTRY_ADDRESS,
        abi: schemaRegistryAbi,
        functionName: "getSchema",
        args: [uid],
      }),
    ).toEqual(record);
  });

  it("attests under it, and reads the attestation back", async () => {
    const schema = SCHEMA_UID;
    const { receipt, attested, uid: attestationUid } = await attestation();
    expect(attested?.args).toMatchObject({ recipient: zeroAddress, attester, schemaUID: schema });
    expect(attestationUid).not.toBe(zeroHash);

    const stored = await client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [attestationUid],
    });
    expect(stored).toMatchObject({
      uid: attestationUid,
      schema,
      attester,
      recipient: zeroAddress,
      data: DATA,
      expirationTime: 0n,
      revocationTime: 0n,
      revocable: false,
      refUID: zeroHash,
    });
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    expect(stored.time).toBe(block.timestamp);
    expect(stored.time).toBeGreaterThan(0n);
    expect(await isValid(attestationUid)).toBe(true);
  });

  it("installs again without changing anything, and restores code a chain lacks, keeping its storage", async () => {
    const { uid: attestationUid } = await attestation();
    const before = await codes();
    await installEas(devnet.rpc);
    expect(await codes()).toEqual(before);

    // A chain saved before EAS was added: the addresses hold no code.
    const test = createTestClient({ mode: "anvil", transport: http(devnet.rpc) });
    await test.setCode({ address: EAS_ADDRESS, bytecode: "0x" });
    await test.setCode({ address: SCHEMA_REGISTRY_ADDRESS, bytecode: "0x" });
    await installEas(devnet.rpc);
    expect(await codes()).toEqual(before);
    const kept = await client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [attestationUid],
    });
    expect(kept.data).toBe(DATA);
    expect(await isValid(attestationUid)).toBe(true);
  });
});
