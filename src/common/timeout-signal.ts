/**
 * `AbortSignal.timeout(ms)` that fires even when only `AbortSignal.any([...])` holds it.
 *
 * Node 20 lets a timeout signal be garbage-collected while a composite built by `AbortSignal.any` still
 * depends on it (nodejs/node#57736): the timer then fires into nothing and the call it was meant to bound
 * waits forever. Measured here: an upstream stream that stalled was never ended in a full test run, once a
 * collection happened inside its 3 s limit. This signal's own timer holds it, so it lives until it fires;
 * the timer is unref'd, so it keeps no process alive.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  return controller.signal;
}
