/**
 * What an agent should know to use the inference API well: its OpenAPI document's `info.x-guidance` and
 * its `/llms.txt` open with it (src/merchant-kit/host-info.ts). The operator may rewrite it
 * (X402M_INFERENCE_GUIDANCE).
 */

export const INFERENCE_GUIDANCE =
  "Chat completions, speech and transcription in OpenAI's dialect (request and answer shapes, refusals in OpenAI's error shape): an OpenAI client works once its calls are paid. " +
  "Start with the free GET /v1/models: per route its tier, model, price, /upto maximum, per-token rates, limits and whether an engine serves it now (a route without one answers 503 before any payment). " +
  "Each tier (/v1/chat/completions/_t/t1 .. t15, and the default /v1/chat/completions) has one price per call, which buys the call whatever its size within the tier's limits. " +
  "For large or uncertain work, its /upto route meters instead: you authorise the maximum and pay the tokens used at the tier's rates, usually far less. " +
  "stream: true sends the reply as it is produced; its receipt comes at the stream's end. " +
  "Speech (POST /v1/audio/speech) and transcription (POST /v1/audio/transcriptions, a multipart upload) offer both a fixed price and metering; the free GET /v1/audio/voices lists the voices.";
