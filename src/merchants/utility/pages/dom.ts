/**
 * The slice of the DOM the page audits use, and the jsdom parser behind it.
 *
 * Why not jsdom's own types: importing them from `src/` (`import { JSDOM } from "jsdom"`) makes the
 * web-stream types of `src/merchant-kit/fetch` fail to compile (TypeScript's `dom` lib then wins over Node's
 * stream types). So jsdom is loaded untyped here and described by these few interfaces, which jsdom's
 * objects satisfy.
 */
import { createRequire } from "node:module";
import type { Context } from "node:vm";
import { onFirstUse } from "../lazy.ts";

export interface DomNode {
  /** 1 element, 3 text, 8 comment, 9 document. */
  readonly nodeType: number;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<DomNode>;
  readonly parentElement: DomElement | null;
}

export interface DomParent extends DomNode {
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
}

export interface DomElement extends DomParent {
  readonly localName: string;
  readonly outerHTML: string;
  innerHTML: string;
  readonly children: ArrayLike<DomElement>;
  readonly ownerDocument: DomDocument;
  readonly previousElementSibling: DomElement | null;
  readonly nextElementSibling: DomElement | null;
  readonly firstElementChild: DomElement | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selectors: string): DomElement | null;
  cloneNode(deep: boolean): DomElement;
  remove(): void;
}

export interface DomDocument extends DomParent {
  readonly documentElement: DomElement;
  readonly body: DomElement | null;
  readonly head: DomElement | null;
  readonly title: string;
  /** The document's base URL: the page URL, or `<base href>`. */
  readonly baseURI: string;
  getElementById(id: string): DomElement | null;
  createElement(tag: string): DomElement;
  cloneNode(deep: boolean): DomDocument;
}

/** A parsed page whose window runs the code we give it (`vm.Script#runInContext`), never its own. */
export interface AuditWindow {
  readonly document: DomDocument;
  /** The window's global object, as code run in `context` sees it. */
  readonly global: Record<string, unknown>;
  readonly context: Context;
  close(): void;
}

interface Jsdom {
  window: { document: DomDocument; close(): void } & Record<string, unknown>;
  getInternalVMContext(): Context;
}

interface JsdomModule {
  JSDOM: new (
    html: string,
    options: { url: string; contentType: string; runScripts?: "outside-only"; virtualConsole?: unknown },
  ) => Jsdom;
  VirtualConsole: new () => unknown;
}

/** jsdom is about 50 MB of a host's memory: loaded by the first page parsed. */
const jsdom = onFirstUse(() => createRequire(import.meta.url)("jsdom") as JsdomModule);

/**
 * Parses HTML as a document served from `url` (relative URLs resolve against it). jsdom runs no script
 * and loads no sub-resource with these options: parsing a hostile page costs CPU, never a request.
 */
export function parseHtml(html: string, url: string): DomDocument {
  const { JSDOM } = jsdom();
  return new JSDOM(html, { url, contentType: "text/html" }).window.document;
}

/**
 * Parses HTML for an engine that runs inside the page's window (axe-core). `runScripts: "outside-only"`
 * gives the window a script context for our code only: the page's `<script>` elements, event handler
 * attributes and `javascript:` URLs still never run, and no sub-resource is loaded. What jsdom does not
 * implement (canvas, layout) it reports to a console nobody listens to.
 */
export function parseForAudit(html: string, url: string): AuditWindow {
  const { JSDOM, VirtualConsole } = jsdom();
  const dom = new JSDOM(html, {
    url,
    contentType: "text/html",
    runScripts: "outside-only",
    virtualConsole: new VirtualConsole(),
  });
  return {
    document: dom.window.document,
    global: dom.window,
    context: dom.getInternalVMContext(),
    close: () => dom.window.close(),
  };
}
