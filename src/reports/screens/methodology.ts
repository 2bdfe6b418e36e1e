/**
 * The version of the screens' rules and thresholds (semantic: a change that moves any figure is a new minor
 * version at least; one that changes what a figure means, a new major). Every report, page, badge and feed
 * row says which version made it; docs/screens.md, "Changelog", says what each version changed.
 */
import type { Methodology } from "../model.ts";
import { SCREENS_PATH } from "./index.ts";

export const METHODOLOGY_VERSION = "1.11.0";

/**
 * The earlier versions and the last commit of this repository that builds each: a window made under one of
 * them is rebuilt by that commit on a copy of the store it was made from (docs/screens.md, "Reproducing a
 * published week"). This program builds only `METHODOLOGY_VERSION`.
 */
export const EARLIER_METHODOLOGIES: Readonly<Record<string, string>> = {
  "1.10.0": "ef103280b194",
  "1.9.0": "5be84c92a4c2",
  "1.8.0": "ed79de668b45",
  "1.6.0": "dd803fb164f4",
  "1.5.0": "879323b32e5b",
  "1.4.0": "039eef096ed1",
  "1.3.0": "cd722991717e",
  "1.2.0": "ffbd3ec1efae",
  "1.1.0": "f5fbe1e03a2a",
  "1.0.0": "9430c4dff4a9",
};

/** A version and its changelog on the screens page. */
export const methodologyOf = (publicUrl: string, version = METHODOLOGY_VERSION): Methodology => ({
  version,
  url: `${publicUrl}${SCREENS_PATH}#changelog`,
});
