/**
 * Waits until what the process wrote to `stream` has left it. stdout and stderr on a pipe are
 * asynchronous: a large write queues in the process while the reader is slower, and `process.exit`
 * drops the queue (a `generate | gzip` lost its last lines). Resolves once nothing is queued, the stream
 * ends or fails (`| head` closing early), or the reader has taken nothing for `stallMs`: a reader that
 * stopped reading must not hold a stopped service forever, and one that reads slowly loses nothing.
 *
 * @param {NodeJS.WriteStream} stream
 * @param {{ stallMs?: number, pollMs?: number }} [options]
 * @returns {Promise<void>}
 */
export function drained(stream, { stallMs = 30_000, pollMs = 5 } = {}) {
  return new Promise((resolve) => {
    let left = stream.writableLength;
    let progressAt = Date.now();
    const done = () => {
      clearInterval(timer);
      stream.off("close", done);
      stream.off("error", done);
      resolve();
    };
    // A stream offers no event for "all written" short of ending it: a short poll of what is queued.
    const timer = setInterval(() => {
      const now = Date.now();
      if (stream.writableLength < left) progressAt = now;
      left = stream.writableLength;
      if (left === 0 || stream.destroyed || now - progressAt > stallMs) done();
    }, pollMs);
    stream.once("close", done);
    stream.once("error", done);
    if (left === 0 || stream.destroyed) done();
  });
}
