/**
 * Small pages with known accessibility problems, one family each, and a clean one: the corpus
 * `/api/a11y/check` is compared with axe-core on (a11y-check.test.ts, docs: pages/README.md).
 */

const page = (body: string, head = "<title>Corpus page</title>", lang = ' lang="en"') =>
  `<!DOCTYPE html><html${lang}><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;

export const CORPUS: Record<string, string> = {
  images: page(`<main><h1>Gallery</h1>
    <img src="/a.jpg">
    <img src="/spacer.gif" alt="">
    <input type="image" src="/go.png">
    <svg role="img" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"/></svg>
    <img src="/map.png" usemap="#m"><map name="m"><area href="/north" shape="rect" coords="0,0,5,5"></map>
    <object data="/chart.swf"></object>
  </main>`),
  controls: page(`<main><h1>Controls</h1>
    <a href="/cart"><span class="icon-cart"></span></a>
    <a href="/home"><img src="/home.png" alt=""></a>
    <button type="button"></button>
    <input type="button">
    <div role="button" tabindex="0"></div>
    <a href="/ok">A named link</a>
  </main>`),
  forms: page(`<main><h1>Contact</h1><form>
    <input type="text" name="name">
    <select name="topic"><option>Sales</option></select>
    <textarea name="message"></textarea>
    <label for="mail">E-mail</label><label for="mail">Work e-mail</label><input id="mail" type="email">
    <input type="text" name="zip" autocomplete="postcode-wrong" aria-label="Postcode">
    <label>Phone <input type="tel" name="phone"></label>
  </form></main>`),
  aria: page(`<main><h1>Widgets</h1>
    <div role="buton">Press</div>
    <div role="checkbox" tabindex="0">Subscribe</div>
    <span aria-hidden="yes">decor</span>
    <div aria-labelledby="missing" role="region">Orphan region</div>
    <input type="text" aria-labelledby="dup"><span id="dup">First</span><span id="dup">Second</span>
    <ul role="list"><div>not a list item</div></ul>
    <div role="tablist"><button>Not a tab</button></div>
    <a href="/x" aria-hidden="true">hidden but focusable</a>
  </main>`),
  structure: page(
    `<div class="page"><h1>News</h1><h3>Skipped a level</h3><h2></h2>
    <ul><li>one</li><p>not in a list item</p></ul>
    <dl><dt>term</dt><p>not a definition</p></dl>
    <p lang="english">Mislabelled language.</p>
    <table><tr><th>Name</th><th>Score</th></tr></table>
    </div>`,
    "",
    "",
  ),
  meta: page(
    `<main><h1>Old tricks</h1><blink>New!</blink><marquee>Scrolling news</marquee>
    <p style="color:#999;background-color:#fff">Grey on white.</p></main>`,
    `<title>Meta</title><meta name="viewport" content="width=device-width, user-scalable=no">
    <meta http-equiv="refresh" content="30">`,
  ),
  // Real pages' stylesheets: everything sits in an overflow:hidden wrapper, which jsdom (0x0 boxes) takes
  // for hiding it from the screen; a cookie dialog is open.
  layout: page(
    `<div class="wrap"><main><h1>Inside a wrapper</h1>
    <img src="/hero.jpg"><a href="/more"><span class="icon"></span></a>
    <blink>New!</blink>
    <p style="letter-spacing: 0.05em !important; word-spacing: 0.05em !important">Text whose spacing users cannot change.</p>
    <label id="l1">Name</label><input aria-labelledby="l1">
    <button aria-label="Close">Cancel</button>
    <div role="tab">A tab outside a tab list</div>
    <div role="dialog" aria-label="Cookie consent"><p>We use cookies.</p><button>Accept</button></div>
    </main></div>`,
    "<title>Layout</title><style>.wrap{overflow:hidden;max-width:60em;margin:auto}</style>",
  ),
  clean: page(`<header><a href="#main">Skip to content</a><nav aria-label="Main"><ul>
    <li><a href="/">Home</a></li><li><a href="/shop">Shop</a></li></ul></nav></header>
    <main id="main"><h1>Tide pools</h1>
    <img src="/pool.jpg" alt="A tide pool with anemones">
    <h2>Visit</h2><p>Go at low tide. <a href="/tides">Tide tables</a>.</p>
    <form><label for="q">Search</label><input id="q" type="search" name="q"><button type="submit">Search</button></form>
    <table><caption>Low tides</caption><tr><th scope="col">Day</th><th scope="col">Time</th></tr>
    <tr><td>Monday</td><td>06:10</td></tr></table>
    </main><footer><p>Shore Notes</p></footer>`),
};

/**
 * A shop's category page, as large as asked: a menu of 480 links, `products` product cards (image, name,
 * price, rating, quantity field, basket and wishlist buttons; every 7th image without alt, every 11th basket
 * button empty), a buying guide of `products / 2` paragraphs and a table of 300 rows. 50 products make
 * about 3,300 elements (80 KB), 430 about 10,700 (420 KB): the "large real-world-like page" of the
 * measurements (pages/README.md).
 */
export function shopPage(products: number): string {
  const menu = Array.from(
    { length: 60 },
    (_, i) =>
      `<li><a href="/c/${i}">Category ${i}</a><ul>${Array.from({ length: 8 }, (_, j) => `<li><a href="/c/${i}/${j}">Sub ${j}</a></li>`).join("")}</ul></li>`,
  ).join("");
  const card = (i: number) => `<li class="card" id="p${i}">
    <a href="/product/${i}" class="thumb"><img src="/img/${i}.jpg" ${i % 7 ? `alt="Product ${i}"` : ""} width="200" height="200"></a>
    <h3 class="title"><a href="/product/${i}">Stoneware mug, ${i % 5 ? "sand" : "slate"} glaze, 350 ml</a></h3>
    <p class="price"><span class="was">€${(i % 40) + 20},00</span> <strong>€${(i % 30) + 12},50</strong></p>
    <div class="rating" role="img" aria-label="${(i % 5) + 1} out of 5 stars"><span>★★★★☆</span></div>
    <form action="/cart" method="post"><input type="hidden" name="id" value="${i}">
    <label>Qty <input type="number" name="qty" value="1" min="1"></label>
    <button type="submit" class="add">${i % 11 ? "Add to basket" : ""}</button>
    <button type="button" aria-label="Save to wishlist"><svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 21l-1-1C5 15 2 12 2 8a5 5 0 0 1 10-2 5 5 0 0 1 10 2c0 4-3 7-9 12z"/></svg></button>
    </form></li>`;
  const paragraph = (i: number) =>
    `<p>Paragraph ${i}: glazes are food-safe once fired at 1,240 °C, <a href="/guide/${i}">read the guide</a>, and <em>more</em> words follow to make a realistic line of text.</p>`;
  const rows = Array.from(
    { length: 300 },
    (_, i) => `<tr><td>S${i}</td><td>${i * 10}</td><td>${i} cm</td></tr>`,
  );
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Shop – all products</title>
<style>.card{display:inline-block;width:220px}.was{text-decoration:line-through;color:#888}.hidden{display:none}</style>
</head><body><a class="skip" href="#main">Skip to content</a><header><nav aria-label="Main"><ul>${menu}</ul></nav></header>
<main id="main"><h1>All products</h1><ul class="grid">${Array.from({ length: products }, (_, i) => card(i)).join("\n")}</ul>
<article><h2>Buying guide</h2>${Array.from({ length: Math.ceil(products / 2) }, (_, i) => paragraph(i)).join("\n")}</article>
<table><caption>Sizes</caption><thead><tr><th>Size</th><th>ml</th><th>Height</th></tr></thead><tbody>${rows.join("")}</tbody></table>
</main><footer><p>© Shop</p></footer></body></html>`;
}
