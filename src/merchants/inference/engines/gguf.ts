/**
 * The local GGUF engine: a model file the operator supplies, run on this host's CPU by llama.cpp through
 * `node-llama-cpp` (its prebuilt linux-x64 binary, shipped in npm: nothing is downloaded or built, at install
 * or at run time; `build: "never"` makes a missing binary an error rather than a build).
 *
 * node-llama-cpp is not in package.json: npm installs 711 MB for it (the CUDA, Vulkan and ARM builds it lists
 * as optional), 45% of the default install, for this one optional engine. An operator who runs a GGUF model
 * installs it beside the project (`GGUF_ENGINE_INSTALL`, docs/inference.md). So nothing here names it to
 * TypeScript or esbuild: the few shapes the engine uses are declared below, and the package is imported at run
 * time from a name in a variable, which neither of them resolves (`tsc` and the CLI's bundle pass without it).
 * Without it a request is a 503 naming the command, never charged, and the inference host says so once at
 * start (`warnIfNotInstalled`).
 *
 * The package and the model are loaded by the first request, not at start (a host that never serves this
 * tier keeps its memory), and kept. The reply uses the model's own chat template (node-llama-cpp picks the
 * wrapper from the file's `tokenizer.chat_template`); system and developer messages become the one system
 * prompt, in their order. Usage is counted by the model's own tokenizer: the prompt as the template renders
 * it (all of it, though llama.cpp reuses what it already evaluated), the reply as the tokens the model
 * generated (those a stop sequence cut away included).
 *
 * One context sequence, so one reply at a time: requests wait their turn. On a 2-core host a second
 * sequence would halve the speed of both replies (and llama.cpp with 2 threads measured 5x slower than with
 * 1 here), so a queue costs a waiting caller nothing it would have had otherwise.
 *
 * A model file that is missing or that llama.cpp cannot load is a 503 that names the file to the operator
 * (the log) and not to the caller, and is never charged.
 */
import { open } from "node:fs/promises";
import { AppError, BadInputError, UpstreamError } from "../../../common/errors.ts";
import { type LogWriter, log } from "../../../common/log.ts";
import type { ChatEngine, ChatEvent, ChatRequest } from "../engine.ts";

/** The node-llama-cpp release this engine is written and tested against (.ci/run installs it from here). */
export const NODE_LLAMA_CPP_VERSION = "3.22.1";

/**
 * The command that installs it, named by the 503 and the start-up warning. `--no-save`: package.json and the
 * lockfile stay as the project ships them, so a `git pull` or an upgrade applies cleanly; the cost is that a
 * later plain `npm install` removes it (npm prunes what package.json does not list), and the start-up warning
 * then asks for it again.
 */
export const GGUF_ENGINE_INSTALL = `npm install --no-save node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`;

/** The package, imported from a variable: TypeScript and esbuild leave it to run time. */
const NODE_LLAMA_CPP = "node-llama-cpp";

/** The parts of node-llama-cpp (3.22) the engine uses; opaque values are handed back as they came. */
interface NodeLlamaCpp {
  getLlama(options: {
    gpu: false;
    build: "never";
    skipDownload: boolean;
    progressLogs: boolean;
  }): Promise<Llama>;
  LlamaChat: new (options: { contextSequence: LlamaContextSequence }) => LlamaChat;
}

interface Llama {
  loadModel(options: { modelPath: string; gpuLayers: number }): Promise<LlamaModel>;
  getGrammarFor(type: "json"): Promise<LlamaGrammar>;
}

type LlamaGrammar = object;

interface LlamaModel {
  readonly tokenizer: unknown;
  createContext(options: {
    contextSize: number | { max: number };
    threads: number;
    sequences: number;
  }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}

interface LlamaContext {
  readonly contextSize: number;
  getSequence(): LlamaContextSequence;
}

interface LlamaContextSequence {
  readonly tokenMeter: { readonly usedOutputTokens: number };
}

interface LlamaChat {
  readonly sequence: LlamaContextSequence;
  readonly chatWrapper: {
    generateContextState(options: { chatHistory: ChatHistoryItem[] }): {
      contextText: { tokenize(tokenizer: unknown): readonly unknown[] };
    };
  };
  generateResponse(
    history: ChatHistoryItem[],
    options: {
      maxTokens: number;
      temperature: number;
      topP: number;
      customStopTriggers?: string[];
      grammar?: LlamaGrammar;
      signal: AbortSignal;
      stopOnAbortSignal: boolean;
      onTextChunk: (text: string) => void;
    },
  ): Promise<{ metadata: { stopReason: string } }>;
}

type ChatHistoryItem =
  | { type: "system"; text: string }
  | { type: "user"; text: string }
  | { type: "model"; response: string[] };

export interface GgufEngineSettings {
  /** The operator's model file. */
  modelPath: string;
  /** CPU threads of the one context; 1 by default (2 measured 5x slower on this project's 2-core hosts). */
  threads?: number;
  /** Tokens the context holds (prompt and reply); the model's own, at most 4,096, by default. */
  contextSize?: number;
  /** The package imported, `node-llama-cpp`; tests name one that is not installed, to meet its real error. */
  packageName?: string;
}

/** The 503 of a model file that is missing or cannot be loaded: nothing was charged. */
export class LocalModelError extends UpstreamError {
  override readonly publicMessage = "this server's local model is not available; nothing was charged";

  constructor(message: string) {
    super(message, "model_unavailable", 503);
  }
}

/**
 * The 503 of a host where node-llama-cpp is not installed, or is but cannot be imported (why, for the log
 * only: it names the server's files), naming the command that installs it. The engine did no work: a
 * refusal, like a route without an engine, so nothing is charged and the payer's wallet is not held to it.
 */
export class GgufEngineMissingError extends AppError {
  constructor(importError: unknown, installed: boolean) {
    const message = (why?: string) =>
      `the local GGUF engine (node-llama-cpp) ${installed ? "cannot be loaded" : "is not installed"} on this server${why === undefined ? "" : ` (${why})`}; its operator installs it with: ${GGUF_ENGINE_INSTALL}; nothing was charged`;
    super(
      503,
      "engine_unavailable",
      installed ? message(oneLine(importError)) : message(),
      installed ? { cause: importError, publicMessage: message() } : { cause: importError },
    );
  }
}

const DEFAULT_MAX_CONTEXT = 4_096;

/** The package and llama.cpp's runtime (its prebuilt CPU binary), once per process. */
interface Runtime {
  llama: Llama;
  LlamaChat: NodeLlamaCpp["LlamaChat"];
}

/** Loaded by the first request of any GGUF engine, and kept; a failed load is tried again by the next one. */
const runtimes = new Map<string, Promise<Runtime>>();

function runtime(packageName: string): Promise<Runtime> {
  let loading = runtimes.get(packageName);
  if (!loading) {
    loading = loadRuntime(packageName);
    runtimes.set(packageName, loading);
    loading.catch(() => runtimes.delete(packageName));
  }
  return loading;
}

async function loadRuntime(packageName: string): Promise<Runtime> {
  let module: NodeLlamaCpp;
  try {
    module = (await import(packageName)) as NodeLlamaCpp;
  } catch (error) {
    throw new GgufEngineMissingError(error, !isMissing(error, packageName));
  }
  try {
    const llama = await module.getLlama({
      gpu: false,
      build: "never",
      skipDownload: true,
      progressLogs: false,
    });
    return { llama, LlamaChat: module.LlamaChat };
  } catch (error) {
    throw new LocalModelError(
      `node-llama-cpp could not load its prebuilt llama.cpp binary: ${oneLine(error)}`,
    );
  }
}

/**
 * The package itself is not found (Node's `Cannot find package 'node-llama-cpp' imported from ...`), as
 * opposed to an installed one whose own files or dependencies are missing (the same code, another name).
 */
function isMissing(error: unknown, packageName: string): boolean {
  return (
    (error as NodeJS.ErrnoException | undefined)?.code === "ERR_MODULE_NOT_FOUND" &&
    String((error as Error).message).includes(`'${packageName}'`)
  );
}

/** Whether node-llama-cpp (`packageName`) can be found from here, as the engine's import will look for it. */
export function ggufEngineInstalled(packageName = NODE_LLAMA_CPP): boolean {
  try {
    import.meta.resolve(packageName);
    return true;
  } catch {
    return false;
  }
}

/**
 * At the inference host's start: when a route names a GGUF model file and node-llama-cpp is not installed,
 * one warning line naming the command that installs it (the host still starts; those routes answer 503,
 * the others work). The package is looked for, not loaded: the first request still loads it. Says whether
 * it warned.
 */
export function warnIfNotInstalled(
  routes: Readonly<Record<string, { gguf: string | null }>>,
  packageName = NODE_LLAMA_CPP,
  write: LogWriter = log,
): boolean {
  const local = Object.keys(routes).filter((alias) => routes[alias]?.gguf);
  if (local.length === 0 || ggufEngineInstalled(packageName)) return false;
  write(
    "warn",
    `the local GGUF engine is not installed: its routes answer 503 until the operator runs ${GGUF_ENGINE_INSTALL}`,
    { routes: local },
  );
  return true;
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  chat: LlamaChat;
}

export function ggufEngine(settings: GgufEngineSettings): ChatEngine {
  const { modelPath } = settings;
  let loading: Promise<Loaded> | undefined;
  /** The end of the queue: each reply starts when the one before it has finished. */
  let queue: Promise<void> = Promise.resolve();

  function load(): Promise<Loaded> {
    loading ??= loadModel(settings).catch((error: unknown) => {
      loading = undefined; // the operator may put the file in place: the next request tries again
      throw error;
    });
    return loading;
  }

  return {
    name: `local GGUF engine (${modelPath})`,
    async *chat(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
      const before = queue;
      let release = () => {};
      queue = new Promise((resolve) => {
        release = resolve;
      });
      try {
        await before;
        if (signal?.aborted) return;
        yield* generate(await load(), request, signal);
      } finally {
        release();
      }
    },
  };
}

async function loadModel(settings: GgufEngineSettings): Promise<Loaded> {
  const { modelPath } = settings;
  await checkMagic(modelPath);
  const { llama, LlamaChat } = await runtime(settings.packageName ?? NODE_LLAMA_CPP);
  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath, gpuLayers: 0 });
  } catch (error) {
    throw new LocalModelError(`the local GGUF model ${modelPath} could not be loaded: ${oneLine(error)}`);
  }
  try {
    const context = await model.createContext({
      contextSize: settings.contextSize ?? { max: DEFAULT_MAX_CONTEXT },
      threads: settings.threads ?? 1,
      sequences: 1,
    });
    return { llama, model, context, chat: new LlamaChat({ contextSequence: context.getSequence() }) };
  } catch (error) {
    await model.dispose();
    throw new LocalModelError(`the local GGUF model ${modelPath} could not get a context: ${oneLine(error)}`);
  }
}

/** A missing file or one that is not GGUF fails here, in a sentence, before llama.cpp reads it. */
async function checkMagic(modelPath: string): Promise<void> {
  let magic: string;
  try {
    const file = await open(modelPath, "r");
    try {
      const { buffer, bytesRead } = await file.read(Buffer.alloc(4), 0, 4, 0);
      magic = buffer.toString("latin1", 0, bytesRead);
    } finally {
      await file.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new LocalModelError(
      code === "ENOENT"
        ? `the local GGUF model file ${modelPath} does not exist`
        : `the local GGUF model file ${modelPath} cannot be read: ${oneLine(error)}`,
    );
  }
  if (magic !== "GGUF") throw new LocalModelError(`${modelPath} is not a GGUF model file (no GGUF magic)`);
}

async function* generate(
  loaded: Loaded,
  request: ChatRequest,
  signal?: AbortSignal,
): AsyncIterable<ChatEvent> {
  const { llama, model, context, chat } = loaded;
  const history = chatHistory(request);
  const promptTokens = chat.chatWrapper
    .generateContextState({ chatHistory: history })
    .contextText.tokenize(model.tokenizer).length;
  const room = context.contextSize - promptTokens;
  if (room <= 0) {
    throw new BadInputError(
      `the prompt is ${promptTokens} tokens; this model's context holds ${context.contextSize}`,
      "context_length_exceeded",
    );
  }
  // A metered call's payment covers the reply after this model's count of the prompt, not o200k_base's.
  const covered = request.outputCovered?.(promptTokens) ?? room;
  if (covered < 1) {
    throw new BadInputError(
      `this model counts the prompt as ${promptTokens} tokens, which leaves no reply within the route's maximum price; send a shorter prompt (nothing was charged)`,
      "prompt_not_covered",
    );
  }
  const maxTokens = Math.min(request.maxTokens, room, covered);
  if (maxTokens < 1) {
    // node-llama-cpp reads a maxTokens of 0 as "no limit".
    yield { type: "done", finishReason: "length", usage: usage(promptTokens, 0) };
    return;
  }
  const grammar = request.responseFormat === "json_object" ? await llama.getGrammarFor("json") : undefined;

  // The library's callbacks fill this; the loop below hands it on as the caller pulls.
  const chunks: string[] = [];
  let finished = false;
  let wake: (() => void) | undefined;
  // Stops the library's generation when the caller aborts or stops pulling.
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener("abort", onAbort, { once: true });

  // Tokens the model generates, counted by the sequence (requests take turns, so the difference is this
  // reply's): the ones a stop sequence cut away were generated too.
  const outputBefore = chat.sequence.tokenMeter.usedOutputTokens;
  const generation = chat
    .generateResponse(history, {
      maxTokens,
      temperature: request.temperature ?? 1, // the dialect's defaults; llama.cpp's own would be greedy
      topP: request.topP ?? 1,
      ...(request.stop &&
        request.stop.length > 0 && { customStopTriggers: request.stop.filter((s) => s !== "") }),
      ...(grammar && { grammar }),
      signal: stop.signal,
      stopOnAbortSignal: true,
      onTextChunk: (text) => {
        if (text !== "") chunks.push(text);
        wake?.();
      },
    })
    .finally(() => {
      finished = true;
      wake?.();
    });

  try {
    for (;;) {
      for (let chunk = chunks.shift(); chunk !== undefined; chunk = chunks.shift()) {
        if (signal?.aborted) return;
        yield { type: "delta", content: chunk };
      }
      if (finished) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    let stopReason: string;
    try {
      stopReason = (await generation).metadata.stopReason;
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new UpstreamError(`the local GGUF model failed mid-reply: ${oneLine(error)}`, "engine_failed");
    }
    if (signal?.aborted || stopReason === "abort") return;
    const completionTokens = chat.sequence.tokenMeter.usedOutputTokens - outputBefore;
    yield {
      type: "done",
      finishReason: stopReason === "maxTokens" ? "length" : "stop",
      usage: usage(promptTokens, completionTokens),
    };
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stop.abort();
    // The sequence is free for the next request only once the library has stopped.
    await generation.catch(() => {});
  }
}

/**
 * The request as node-llama-cpp's chat history: one system prompt first, then the user and assistant
 * turns, then the reply to generate (an assistant message last is a reply to continue, as a prefill).
 */
function chatHistory(request: ChatRequest): ChatHistoryItem[] {
  const system = request.messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => m.content ?? "");
  const history: ChatHistoryItem[] = system.length > 0 ? [{ type: "system", text: system.join("\n\n") }] : [];
  for (const m of request.messages) {
    if (m.role === "user") history.push({ type: "user", text: m.content ?? "" });
    else if (m.role === "assistant") history.push({ type: "model", response: [m.content ?? ""] });
  }
  if (history.at(-1)?.type !== "model") history.push({ type: "model", response: [] });
  return history;
}

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
}
