/**
 * A small seeded random source, so a simulated week is the same for the same seed: the plan of any slot
 * can be recomputed on resume without storing it.
 */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** Poisson-distributed count of mean `mean` (Knuth's method; means here are small). */
  poisson(mean: number): number;
}

/** mulberry32 seeded from several integers (e.g. seed, slot, stream). */
export function random(...seeds: number[]): Random {
  let state = 0x9e3779b9;
  for (const seed of seeds) state = Math.imul(state ^ (seed >>> 0), 0x85ebca6b) ^ (state >>> 13);
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    poisson(mean) {
      if (mean <= 0) return 0;
      const limit = Math.exp(-mean);
      let k = 0;
      let p = next();
      while (p > limit) {
        k++;
        p *= next();
      }
      return k;
    },
  };
}
