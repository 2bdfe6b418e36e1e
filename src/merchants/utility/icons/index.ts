/**
 * Icons of the utility API (docs/platform.md, "The utility API's endpoints"): `GET /api/icon/search` ranks Font Awesome Free icons for a keyword,
 * `POST /api/icon/generate` renders the chosen one as SVG or PNG. The index and ranking are in
 * `icon-index.ts`, the rendering in `icon-render.ts`; see README.md.
 */
import type { AnyEndpoint } from "../../../merchant-kit/index.ts";
import { iconGenerate } from "./generate.ts";
import { iconSearch } from "./search.ts";

export { iconGenerate, iconSearch };

/** In the price list's order: /api/icon/search, then its companion POST /api/icon/generate. */
export const ICON_ENDPOINTS: readonly AnyEndpoint[] = [iconSearch, iconGenerate];
