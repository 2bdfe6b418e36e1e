/**
 * What an endpoint needs, loaded by its first call. The utility API's engines stand on large packages
 * (mathjs, jsdom, pdfkit, sharp, resvg): loaded with the catalogue, every host held all of them from its
 * start, whether or not it was ever asked to calculate or to read a page (docs/benchmarks-log.md, "A merchant
 * host's memory"). The first call pays the load once (measured there); later calls get the same module.
 *
 * `load` is a dynamic `import()` where the package has an ESM build of its own (the build a static import
 * would load), else a `require` of the CommonJS file a static import resolves to as well.
 *
 * @example
 * const engine = onFirstUse(() => import("./calc-engine.ts"));
 * const { calculate } = await engine();
 */
export function onFirstUse<T>(load: () => T): () => T {
  let loaded: { value: T } | undefined;
  return function loadOnce(): T {
    // A `require` that throws leaves nothing behind: the next call tries again.
    loaded ??= { value: load() };
    return loaded.value;
  };
}
