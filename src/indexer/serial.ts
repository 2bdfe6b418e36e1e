/**
 * Runs async jobs one at a time, in the order they were queued. The analytics database has one DuckDB connection,
 * and two interleaved transactions on it would mix their statements: the indexer's commits and the
 * listings refresh share it through this.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job, job);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
