import { describe, expect, it } from "vitest";
import { StoreChanges } from "../../../src/analytics/changes.ts";
import { Answers } from "../../../src/reports/serve/answers.ts";

/** A render that records what it rendered, for which window. */
function recorder() {
  const rendered: string[] = [];
  const render = (what: string) => async (end: number) => {
    rendered.push(`${what}@${end}`);
    return { body: `${what} of ${end}`, type: "text/plain", builtAt: "2026-11-26T00:00:00+00:00" };
  };
  return { rendered, render };
}

describe("Answers", () => {
  it("keeps an answer until a write reaches its window, and drops the least recently asked past its bytes", async () => {
    const changes = new StoreChanges();
    const answers = new Answers(changes, { maxBytes: 40 });
    const { rendered, render } = recorder();
    await answers.get("/a", 100, render("/a"));
    await answers.get("/a", 100, render("/a"));
    changes.committed(101);
    await answers.get("/a", 100, render("/a"));
    expect(rendered).toEqual(["/a@100"]);
    changes.committed(100);
    await answers.get("/a", 100, render("/a"));
    expect(rendered).toEqual(["/a@100", "/a@100"]);
    // "/a of 100" is 9 bytes: four fit in 40, the fifth pushes out the least recently asked ("/b").
    for (const what of ["/b", "/c", "/d"]) await answers.get(what, 100, render(what));
    await answers.get("/a", 100, render("/a"));
    await answers.get("/e", 100, render("/e"));
    rendered.length = 0;
    for (const what of ["/a", "/c", "/d", "/e", "/b"]) await answers.get(what, 100, render(what));
    expect(rendered).toEqual(["/b@100"]);
  });

  it("renders for a new head what was asked of the previous one, the 256 most recently asked", async () => {
    const changes = new StoreChanges();
    const answers = new Answers(changes);
    const { rendered, render } = recorder();
    const paths = Array.from({ length: 300 }, (_, i) => `/p${i}`);
    for (const what of paths) await answers.get(what, 7, render(what));
    await answers.get("/other", 6, render("/other"));
    rendered.length = 0;
    await answers.warm(7, 8);
    expect(rendered.length).toBe(256);
    expect(new Set(rendered)).toEqual(new Set(paths.slice(-256).map((p) => `${p}@8`)));
    rendered.length = 0;
    for (const what of paths.slice(-256)) await answers.get(what, 8, render(what));
    expect(rendered).toEqual([]);
  });
});
