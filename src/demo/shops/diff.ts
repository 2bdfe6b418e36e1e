import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";

export const MAX_LINES = 500;

const side = (name: string) =>
  z.string().max(20_000).describe(`The ${name} text, up to 20,000 characters and ${MAX_LINES} lines.`);

const DiffInput = z.object({ a: side("old"), b: side("new") });

const Op = z.enum(["equal", "delete", "insert"]);

const DiffOutput = z.object({
  identical: z.boolean(),
  added: z.number().int(),
  removed: z.number().int(),
  unchanged: z.number().int(),
  lines: z
    .array(
      z.object({
        op: Op,
        text: z.string(),
        a_line: z.number().int().nullable().describe("Line number in a (from 1), null for insertions."),
        b_line: z.number().int().nullable().describe("Line number in b (from 1), null for deletions."),
      }),
    )
    .describe("Every line of both texts, in order, marked equal, delete or insert."),
  patch: z.string().describe('The same as text: each line prefixed with " ", "-" or "+".'),
});

type Line = z.output<typeof DiffOutput>["lines"][number];

/** A line diff from the longest common subsequence (deletions before insertions). */
export function diffLines(a: string[], b: string[]): Line[] {
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i] as Uint16Array;
    const below = lcs[i + 1] as Uint16Array;
    for (let j = m - 1; j >= 0; j--) {
      row[j] =
        a[i] === b[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
  }
  const out: Line[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ op: "equal", text: a[i] as string, a_line: i + 1, b_line: j + 1 });
      i++;
      j++;
    } else if (i < n && (j >= m || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      out.push({ op: "delete", text: a[i] as string, a_line: i + 1, b_line: null });
      i++;
    } else {
      out.push({ op: "insert", text: b[j] as string, a_line: null, b_line: j + 1 });
      j++;
    }
  }
  return out;
}

const splitLines = (s: string) => (s === "" ? [] : s.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n"));
const PREFIX = { equal: " ", delete: "-", insert: "+" } as const;

export function diffTexts(a: string, b: string): z.output<typeof DiffOutput> {
  const al = splitLines(a);
  const bl = splitLines(b);
  if (al.length > MAX_LINES || bl.length > MAX_LINES)
    throw new BadInputError(`at most ${MAX_LINES} lines per text`);
  const lines = diffLines(al, bl);
  const count = (op: Line["op"]) => lines.filter((l) => l.op === op).length;
  return {
    identical: lines.every((l) => l.op === "equal"),
    added: count("insert"),
    removed: count("delete"),
    unchanged: count("equal"),
    lines,
    patch: lines.map((l) => PREFIX[l.op] + l.text).join("\n"),
  };
}

export const diff = defineEndpoint({
  method: "POST",
  path: "/diff",
  price: "0.05",
  description:
    "Line-by-line diff of two texts (longest common subsequence): added, removed and unchanged lines.",
  input: DiffInput,
  output: DiffOutput,
  example: {
    input: { a: "apple\nbanana\ncherry", b: "apple\nblueberry\ncherry\ndate" },
    output: {
      identical: false,
      added: 2,
      removed: 1,
      unchanged: 2,
      lines: [
        { op: "equal", text: "apple", a_line: 1, b_line: 1 },
        { op: "delete", text: "banana", a_line: 2, b_line: null },
        { op: "insert", text: "blueberry", a_line: null, b_line: 2 },
        { op: "equal", text: "cherry", a_line: 3, b_line: 3 },
        { op: "insert", text: "date", a_line: null, b_line: 4 },
      ],
      patch: " apple\n-banana\n+blueberry\n cherry\n+date",
    },
  },
  errors: { 400: "A text of too many lines (bad_request), found once the payment is verified." },
  handler: async (b) => diffTexts(b.a, b.b),
});
