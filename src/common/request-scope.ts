/**
 * What a request carries down its async calls, for code that cannot be handed it (a log line's request id, a
 * paid request's channel state under the SDK's hooks): one `AsyncLocalStorage` for the whole process, each
 * concern a slot of it (`scopeSlot`), set around the code it is for as a storage's `run` would be.
 *
 * One storage rather than one per concern because Node 20 visits every storage ever entered on every promise
 * and async resource made anywhere in the process (async_hooks' `init`, a `_propagate` call per storage), and a
 * paid request makes thousands of them: with five storages (the log's, the receipt's request hash, the channel
 * request, the v1 route, the facilitator watch) that was about 5% of `serve`'s CPU under paid load
 * (docs/benchmarks-log.md, 2026-11-29).
 *
 * A slot set within another's `run` sees the outer slots still set, as storages nested would; a slot set again
 * within its own `run` hides the outer value until the inner `run` returns.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** One slot's value, and the frame it was set within: a request's frames are a handful deep. */
interface Frame {
  readonly key: symbol;
  readonly value: unknown;
  readonly parent: Frame | undefined;
}

const frames = new AsyncLocalStorage<Frame>();

/** One concern's value in the request under way. */
export interface ScopeSlot<T> {
  /** The value set around the code running now, if any. */
  get(): T | undefined;
  /** Runs `fn` with `value` as this slot's, however deep in async calls. */
  run<R>(value: T, fn: () => R): R;
}

/** A slot of its own for one concern (`name` says which, in a debugger). */
export function scopeSlot<T>(name: string): ScopeSlot<T> {
  const key = Symbol(name);
  return {
    get() {
      for (let frame = frames.getStore(); frame !== undefined; frame = frame.parent) {
        if (frame.key === key) return frame.value as T;
      }
      return undefined;
    },
    run(value, fn) {
      return frames.run({ key, value, parent: frames.getStore() }, fn);
    },
  };
}
