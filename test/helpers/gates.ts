/**
 * Named gates a test endpoint's handler waits at, so that a test decides when a call's work ends instead of
 * timing it: the handler `pass`es (saying it arrived, then waiting), the test awaits `entered` and `release`s.
 * A gate opens once; `close` lets every handler still waiting go, so that nothing is left hanging.
 */
export interface Gates {
  /** In a handler: says it reached the gate, then waits until it is released. */
  pass(name: string): Promise<void>;
  /** Resolves once a handler has reached the gate. */
  entered(name: string): Promise<void>;
  release(name: string): void;
  /** Releases every gate. */
  close(): void;
}

export function gates(): Gates {
  const all = new Map<string, { entered: Deferred; released: Deferred }>();
  const gate = (name: string) => {
    let g = all.get(name);
    if (!g) {
      g = { entered: deferred(), released: deferred() };
      all.set(name, g);
    }
    return g;
  };
  return {
    async pass(name) {
      const g = gate(name);
      g.entered.resolve();
      await g.released.promise;
    },
    entered: (name) => gate(name).entered.promise,
    release: (name) => gate(name).released.resolve(),
    close() {
      for (const g of all.values()) g.released.resolve();
    },
  };
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
