import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

/** A selection of CSS named colours (CSS Color Module Level 4). */
export const NAMED_COLOURS: Readonly<Record<string, string>> = {
  black: "#000000",
  white: "#ffffff",
  gray: "#808080",
  silver: "#c0c0c0",
  red: "#ff0000",
  maroon: "#800000",
  crimson: "#dc143c",
  pink: "#ffc0cb",
  hotpink: "#ff69b4",
  orange: "#ffa500",
  coral: "#ff7f50",
  tomato: "#ff6347",
  gold: "#ffd700",
  yellow: "#ffff00",
  khaki: "#f0e68c",
  olive: "#808000",
  lime: "#00ff00",
  green: "#008000",
  forestgreen: "#228b22",
  seagreen: "#2e8b57",
  teal: "#008080",
  cyan: "#00ffff",
  turquoise: "#40e0d0",
  skyblue: "#87ceeb",
  steelblue: "#4682b4",
  blue: "#0000ff",
  navy: "#000080",
  royalblue: "#4169e1",
  indigo: "#4b0082",
  purple: "#800080",
  violet: "#ee82ee",
  magenta: "#ff00ff",
  lavender: "#e6e6fa",
  brown: "#a52a2a",
  chocolate: "#d2691e",
  tan: "#d2b48c",
  beige: "#f5f5dc",
  salmon: "#fa8072",
  slategray: "#708090",
  ivory: "#fffff0",
};

const ColourInput = z.object({
  hex: z
    .string()
    .trim()
    .regex(/^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, "a hex colour like #1e90ff or 1e90ff or #09f")
    .describe("The colour as hex: #rrggbb or #rgb, the # optional."),
});

const Rgb = z.object({ r: z.number().int(), g: z.number().int(), b: z.number().int() });

const ColourOutput = z.object({
  hex: z.string().describe("The colour, #rrggbb lower-case."),
  rgb: Rgb,
  name: z.string().describe(`The nearest of ${Object.keys(NAMED_COLOURS).length} CSS named colours.`),
  name_hex: z.string(),
  distance: z.number().describe("Euclidean RGB distance to it, 1 decimal (0: exact)."),
  exact: z.boolean(),
});

export function toRgb(hex: string): z.output<typeof Rgb> {
  let h = hex.replace(/^#/, "").toLowerCase();
  if (h.length === 3) h = [...h].map((c) => c + c).join("");
  const n = Number.parseInt(h, 16);
  return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255 };
}

export function nameColour(hex: string): z.output<typeof ColourOutput> {
  const rgb = toRgb(hex);
  let best = { name: "", hex: "", d: Number.POSITIVE_INFINITY };
  for (const [name, h] of Object.entries(NAMED_COLOURS)) {
    const c = toRgb(h);
    const d = Math.hypot(rgb.r - c.r, rgb.g - c.g, rgb.b - c.b);
    if (d < best.d) best = { name, hex: h, d };
  }
  const own = `#${[rgb.r, rgb.g, rgb.b].map((v) => v.toString(16).padStart(2, "0")).join("")}`;
  return {
    hex: own,
    rgb,
    name: best.name,
    name_hex: best.hex,
    distance: Math.round(best.d * 10) / 10,
    exact: best.d === 0,
  };
}

export const colourName = defineEndpoint({
  method: "GET",
  path: "/name",
  price: "0.003",
  description: "Names a hex colour: the nearest CSS named colour by RGB distance, with its RGB values.",
  input: ColourInput,
  output: ColourOutput,
  example: {
    input: { hex: "#fe0000" },
    output: {
      hex: "#fe0000",
      rgb: { r: 254, g: 0, b: 0 },
      name: "red",
      name_hex: "#ff0000",
      distance: 1,
      exact: false,
    },
  },
  handler: async (q) => nameColour(q.hex),
});
