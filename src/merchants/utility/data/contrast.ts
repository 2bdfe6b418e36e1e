import { z } from "zod";
import type { AppError } from "../../../common/errors.ts";
import { defineEndpoint } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { contrast as contrastOf, parseColor } from "./contrast-engine.ts";

/**
 * `fg`/`bg` are what comparable contrast APIs take; `foreground`/`background` and WebAIM's API names
 * `fcolor`/`bcolor` are accepted too. One name per colour.
 */
const ALIASES = {
  foreground: ["fg", "foreground", "fcolor"],
  background: ["bg", "background", "bcolor"],
} as const;

const colorField = (role: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe(
      `The ${role} colour: #rgb, #rrggbb, #rrggbbaa (the "#" may be omitted), rgb()/rgba(), hsl() or a CSS colour name.`,
    );

const ContrastInput = z
  .object({
    fg: colorField("foreground (text)"),
    bg: colorField("background"),
    foreground: colorField("foreground").describe("Same as `fg`."),
    background: colorField("background").describe("Same as `bg`."),
    fcolor: colorField("foreground").describe("Same as `fg` (WebAIM's name)."),
    bcolor: colorField("background").describe("Same as `bg` (WebAIM's name)."),
  })
  .superRefine((q, ctx) => {
    for (const [role, names] of Object.entries(ALIASES)) {
      const given = names.filter((n) => q[n] !== undefined);
      if (given.length !== 1) {
        ctx.addIssue({
          code: "custom",
          path: [names[0]],
          message:
            given.length === 0
              ? `give the ${role} colour as \`${names[0]}\``
              : `give the ${role} colour once, not as ${given.join(" and ")}`,
        });
        continue;
      }
      // Checked here, before any payment is asked for.
      try {
        parseColor(q[given[0] as (typeof names)[number]] as string, role);
      } catch (error) {
        ctx.addIssue({ code: "custom", path: [given[0] as string], message: (error as AppError).message });
      }
    }
  });

const Pass = z.object({ AA: z.boolean(), AAA: z.boolean() });

const ContrastOutput = z.object({
  contrast_ratio: z.number().describe("The ratio rounded to 2 decimals (display only)."),
  contrast_ratio_exact: z
    .number()
    .describe("The unrounded ratio: pass/fail is decided on it (4.499 fails AA)."),
  ratio_string: z.string().describe('e.g. "4.48:1".'),
  foreground: z.string().describe("The foreground as given, #rrggbb or #rrggbbaa."),
  background: z.string().describe("The background as given, #rrggbb or #rrggbbaa."),
  effective_foreground: z
    .string()
    .describe("The foreground composited over the background when semi-transparent, #rrggbb."),
  effective_background: z
    .string()
    .describe("The background composited over white when semi-transparent, #rrggbb."),
  luminance: z
    .object({ foreground: z.number(), background: z.number() })
    .describe("WCAG relative luminances."),
  passes: z.object({
    normal_text: Pass.describe("SC 1.4.3 / 1.4.6: AA >= 4.5, AAA >= 7."),
    large_text: Pass.describe("Large text (18pt, or 14pt bold): AA >= 3, AAA >= 4.5."),
    ui_components: z.boolean().describe("SC 1.4.11 non-text contrast (AA): >= 3."),
  }),
});

export const contrast = defineEndpoint({
  method: "GET",
  path: "/api/a11y/contrast",
  price: PRICES["/api/a11y/contrast"],
  description:
    "Exact WCAG 2.x contrast ratio of a foreground and background colour (hex, rgb(), names; alpha composited) and AA/AAA pass/fail for normal text, large text and UI components.",
  input: ContrastInput,
  output: ContrastOutput,
  example: {
    input: { fg: "#777777", bg: "#ffffff" },
    output: contrastOf("#777777", "#ffffff"),
  },
  timeoutMs: 2_000,
  handler: async (q) =>
    contrastOf(q.fg ?? q.foreground ?? q.fcolor ?? "", q.bg ?? q.background ?? q.bcolor ?? ""),
});
