/**
 * The local GGUF engine: a model file the operator supplies, run on this host's CPU by llama.cpp through
 * `node-llama-cpp` (its prebuilt linux-x64 binary, shipped in npm: nothing is downloaded or built, at install
 * or at run time; `build: "never"` makes a missing binary an error rather than a build).
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
import type { ChatHistoryItem, Llama, LlamaChat, LlamaContext, LlamaModel } from "node-llama-cpp";
import { AppError, BadInputError, UpstreamError } from "../../../common/errors.ts";
import { onFirstUse } from "../../utility/lazy.ts";
import type { ChatEngine, ChatEvent, ChatRequest } from "../engine.ts";

export interface GgufEngineSettings {
  /** The operator's model file. */
  modelPath: string;
  /** CPU threads of the one context; 1 by default (2 measured 5x slower on this project's 2-core hosts). */
  threads?: number;
  /** Tokens the context holds (prompt and reply); the model's own, at most 4,096, by default. */
  contextSize?: number;
}

/** The 503 of a model file that is missing or cannot be loaded: nothing was charged. */
export class LocalModelError extends UpstreamError {
  override readonly publicMessage = "this server's local model is not available; nothing was charged";

  constructor(message: string) {
    super(message, "model_unavailable", 503);
  }
}

const DEFAULT_MAX_CONTEXT = 4_096;

/** The package itself, imported by the first request of any GGUF engine. */
const nodeLlamaCpp = onFirstUse(() => import("node-llama-cpp"));

/** llama.cpp's runtime (its prebuilt CPU binary), loaded once per process. */
const llamaRuntime = onFirstUse(async (): Promise<Llama> => {
  const { getLlama } = await nodeLlamaCpp();
  return getLlama({ gpu: false, build: "never", skipDownload: true, progressLogs: false });
});

interface Loaded {
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
  let llama: Llama;
  try {
    llama = await llamaRuntime();
  } catch (error) {
    throw new LocalModelError(
      `node-llama-cpp could not load its prebuilt llama.cpp binary: ${oneLine(error)}`,
    );
  }
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
    const { LlamaChat } = await nodeLlamaCpp();
    return { model, context, chat: new LlamaChat({ contextSequence: context.getSequence() }) };
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
  const { model, context, chat } = loaded;
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
  const maxTokens = Math.min(request.maxTokens, room);
  if (maxTokens < 1) {
    // node-llama-cpp reads a maxTokens of 0 as "no limit".
    yield { type: "done", finishReason: "length", usage: usage(promptTokens, 0) };
    return;
  }
  const grammar =
    request.responseFormat === "json_object" ? await (await llamaRuntime()).getGrammarFor("json") : undefined;

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
