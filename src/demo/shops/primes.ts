import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const MAX = 2n ** 53n;

const FactorInput = z.object({
  n: z
    .string()
    .trim()
    .regex(/^\d{1,16}$/, "must be a whole number, e.g. 360")
    .transform((s) => BigInt(s))
    .refine((n) => n >= 2n && n <= MAX, "must be from 2 to 2^53 (9007199254740992)")
    .describe("A whole number from 2 to 2^53 (9,007,199,254,740,992)."),
});

const FactorOutput = z.object({
  n: z.number().int(),
  is_prime: z.boolean(),
  factors: z
    .array(z.object({ prime: z.number().int(), exponent: z.number().int() }))
    .describe("Prime factors, ascending, with their exponents."),
  factorization: z.string().describe('e.g. "2^3 × 3^2 × 5".'),
  divisor_count: z.number().int().describe("How many positive divisors n has."),
});

function powMod(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n;
  let b = base % mod;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % mod;
    b = (b * b) % mod;
    e >>= 1n;
  }
  return result;
}

/** Deterministic Miller-Rabin: these bases are exact for every n below 3.3 × 10^24. */
export function isPrime(n: bigint): boolean {
  if (n < 2n) return false;
  const bases = [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n];
  for (const p of bases) if (n % p === 0n) return n === p;
  let d = n - 1n;
  let s = 0;
  while ((d & 1n) === 0n) {
    d >>= 1n;
    s++;
  }
  outer: for (const a of bases) {
    let x = powMod(a, d, n);
    if (x === 1n || x === n - 1n) continue;
    for (let r = 1; r < s; r++) {
      x = (x * x) % n;
      if (x === n - 1n) continue outer;
    }
    return false;
  }
  return true;
}

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a < 0n ? -a : a, b];
  while (y) [x, y] = [y, x % y];
  return x;
}

/** A non-trivial factor of an odd composite n (Pollard's rho, Brent's variant with batched gcds). */
function rho(n: bigint): bigint {
  for (let c = 1n; ; c++) {
    const f = (x: bigint) => (x * x + c) % n;
    let y = 2n;
    let x = y;
    let g = 1n;
    let q = 1n;
    let ys = y;
    let r = 1;
    while (g === 1n) {
      x = y;
      for (let i = 0; i < r; i++) y = f(y);
      for (let k = 0; k < r && g === 1n; k += 64) {
        ys = y;
        for (let i = 0; i < Math.min(64, r - k); i++) {
          y = f(y);
          q = (q * (x > y ? x - y : y - x)) % n;
        }
        g = gcd(q, n);
      }
      r *= 2;
    }
    if (g === n) {
      do {
        ys = f(ys);
        g = gcd(x > ys ? x - ys : ys - x, n);
      } while (g === 1n);
    }
    if (g !== n) return g;
  }
}

export function factorize(n: bigint): Map<bigint, number> {
  const out = new Map<bigint, number>();
  const add = (p: bigint) => out.set(p, (out.get(p) ?? 0) + 1);
  let m = n;
  for (let p = 2n; p < 1000n && p * p <= m; p += p === 2n ? 1n : 2n) {
    while (m % p === 0n) {
      add(p);
      m /= p;
    }
  }
  const stack = m > 1n ? [m] : [];
  while (stack.length) {
    const k = stack.pop() as bigint;
    if (isPrime(k)) {
      add(k);
      continue;
    }
    const d = rho(k);
    stack.push(d, k / d);
  }
  return new Map([...out].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
}

export const factor = defineEndpoint({
  method: "GET",
  path: "/factor",
  price: "0.01",
  description:
    "Tells whether a number up to 2^53 is prime and gives its prime factorization and divisor count (Miller-Rabin and Pollard's rho).",
  input: FactorInput,
  output: FactorOutput,
  example: {
    input: { n: "360" },
    output: {
      n: 360,
      is_prime: false,
      factors: [
        { prime: 2, exponent: 3 },
        { prime: 3, exponent: 2 },
        { prime: 5, exponent: 1 },
      ],
      factorization: "2^3 × 3^2 × 5",
      divisor_count: 24,
    },
  },
  handler: async (q) => {
    const factors = [...factorize(q.n)].map(([p, e]) => ({ prime: Number(p), exponent: e }));
    return {
      n: Number(q.n),
      is_prime: isPrime(q.n),
      factors,
      factorization: factors
        .map((f) => (f.exponent > 1 ? `${f.prime}^${f.exponent}` : `${f.prime}`))
        .join(" × "),
      divisor_count: factors.reduce((d, f) => d * (f.exponent + 1), 1),
    };
  },
});
