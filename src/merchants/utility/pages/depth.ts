/**
 * How deep a page's markup nests its elements, read from the HTML itself in one linear pass, before any
 * parser builds the tree: jsdom's tree building is quadratic in the depth (200,000 nested `<div>`s kept a
 * worker busy past any deadline, and overflowed Readability's and turndown's recursion on the request loop
 * before, issue 69), and so is htmlparser2's open-element stack.
 *
 * An estimate on the safe side for real pages: elements whose end tag HTML lets a page omit (`p`, `li`,
 * `td`...), void elements, `<x/>`, and `a` and the formatting elements (`b`, `font`...: a parser closes and
 * reopens those at each paragraph, at most three alike) are not counted, so a page that leaves them open is
 * not taken for deep; an unclosed `<div>` counts until its parent's end tag closes it, as parsers do. The
 * tree jsdom builds is measured again after the parse (`page-worker.ts`). Comments and the text
 * of `script`, `style`, `textarea`, `title` and their kin are skipped.
 */

const NOT_COUNTED = new Set(
  (
    "area base br col embed hr img input link meta source track wbr param keygen " +
    "p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rb rt rp rtc html head body a " +
    "b big code em font i nobr s small strike strong tt u"
  ).split(" "),
);

const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"]);

const TOKEN = /<!--|<(\/?)([a-zA-Z][^\s/>]*)[^>]*?(\/?)>/g;

/**
 * The deepest nesting of counted elements (see the module's header). Linear: each element is pushed and
 * popped once, and an end tag with nothing of its name open is passed over without searching the stack.
 */
export function markupDepth(html: string): number {
  const open: string[] = [];
  const openByName = new Map<string, number>();
  let deepest = 0;
  const token = new RegExp(TOKEN.source, "g");
  for (let m = token.exec(html); m; m = token.exec(html)) {
    if (m[0] === "<!--") {
      const end = html.indexOf("-->", token.lastIndex);
      if (end < 0) break;
      token.lastIndex = end + 3;
      continue;
    }
    const name = (m[2] ?? "").toLowerCase();
    if (m[1]) {
      // An end tag closes the nearest open element of its name and every one opened after it.
      if (!openByName.get(name)) continue;
      for (let top = open.pop(); top !== undefined; top = open.pop()) {
        openByName.set(top, (openByName.get(top) ?? 1) - 1);
        if (top === name) break;
      }
      continue;
    }
    if (RAW_TEXT.has(name)) {
      const close = new RegExp(`</${name}`, "gi");
      close.lastIndex = token.lastIndex;
      if (!close.exec(html)) break;
      token.lastIndex = close.lastIndex;
      continue;
    }
    if (m[3] || NOT_COUNTED.has(name)) continue;
    open.push(name);
    openByName.set(name, (openByName.get(name) ?? 0) + 1);
    if (open.length > deepest) deepest = open.length;
  }
  return deepest;
}
