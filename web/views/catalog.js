// Home (the featured products and the categories) and the category page.

import { get, query } from "../api.js";
import { attributeName, availabilityBadge, h, money, pager, problemText, put, screenCost, showCost, stars } from "../ui.js";

// Category names seen on the home screen, kept for the browser session, so
// the category page can title itself before its products say it.
const namesKey = "shop.categoryNames";

// categoryName is the name of a category as the shop last said it, or its
// id as it is: never a name made up from the id.
export function categoryName(id) {
  const names = JSON.parse(sessionStorage.getItem(namesKey) || "{}");
  return names[id] || id;
}

// Home: ONE point read of the categories index document, which carries
// the best-rated products of each category (kept by the products feed).
export async function home(main) {
  const { data, cost } = await get("/v1/categories");
  screenCost(main, "GET /v1/categories", cost);
  sessionStorage.setItem(namesKey, JSON.stringify(Object.fromEntries(data.items.map((c) => [c.id, c.name]))));
  const featured = data.featured || [];
  // On a narrow screen the departments come before the featured cards
  // (styles.css orders .home's sections), not some 3,600 px down.
  main.classList.add("home");
  put(main,
    h("section", { class: "hero", "aria-labelledby": "home-h" },
      h("h1", { id: "home-h" }, "Well made, fairly priced"),
      h("p", {}, `${data.items.length} departments of things people keep for years. Free returns within 30 days.`)),
    featured.length ? h("section", { "aria-labelledby": "featured-h" },
      h("h2", { id: "featured-h" }, "Top rated in every department"),
      h("ul", { class: "cards products featured" }, featured.map(summaryCard))) : null,
    h("section", { class: "departments", "aria-labelledby": "cats-h" },
      h("h2", { id: "cats-h" }, "Shop by department"),
      h("ul", { class: "cards categories" },
        data.items.map((c) => h("li", { class: "card" },
          h("a", { href: `#/c/${encodeURIComponent(c.id)}` },
            h("span", { class: "card-title" }, c.name),
            h("span", { class: "muted" }, `${c.productCount} product${c.productCount === 1 ? "" : "s"}`)))))),
  );
}

// thumb is a product's picture: the shop draws it (imageUrl), and the
// name's first letter stands in while it loads or if it fails.
export function thumb(imageUrl, name, big = false) {
  const box = h("div", { class: "thumb", "aria-hidden": "true" }, name.slice(0, 1));
  if (imageUrl) {
    const img = h("img", {
      src: imageUrl, alt: "", loading: big ? "eager" : "lazy", decoding: "async", width: "400", height: "400",
    });
    img.addEventListener("error", () => img.remove());
    box.append(img);
  }
  return box;
}

// fromPrice is a card's price: "From $19.99" for a product whose
// variants cost more than the lowest (the copy's priceMaxCents).
export function fromPrice(p) {
  const lo = money(p.priceCents, p.currency);
  return p.priceMaxCents > p.priceCents ? `From ${lo}` : lo;
}

// productCard is one product of a grid, with its rating line; its
// availability is the copy the summary carries, so the badge costs no read.
function productCard(p, rating) {
  return h("li", { class: "card product", "data-product": p.id },
    h("a", { href: `#/p/${encodeURIComponent(p.id)}`, class: "card-image", tabindex: "-1", "aria-hidden": "true" },
      thumb(p.imageUrl, p.name)),
    h("a", { href: `#/p/${encodeURIComponent(p.id)}`, class: "card-title" }, p.name),
    h("span", { class: "price" }, fromPrice(p)),
    availabilityBadge(p),
    rating
      ? h("span", { class: "muted rating" }, stars(rating.value), ` ${rating.value.toFixed(1)}${rating.count ? ` (${rating.count})` : ""}`)
      : h("span", { class: "muted rating" }, "No reviews yet"),
  );
}

// summaryCard is a product of the category page or the home page: its
// average rating and how many reviews it has.
export function summaryCard(p) {
  return productCard(p, p.reviewCount ? { value: p.averageRating, count: p.reviewCount } : null);
}

// resultCard is a search result: its rating in half stars and no review
// count, all the search index copies (GET /v1/search; docs/architecture.md,
// "What each copy carries"), so that a review rewrites no entry unless it
// moves the stars.
export function resultCard(p) {
  return productCard(p, p.rating ? { value: p.rating } : null);
}

// productGrid is a grid of products read one page at a time: the first
// page's items, and a "show more" that reads path with params and the
// continuation, adds the page's cards (card, summaryCard by default) and
// the page's cost to the screen's in the cost bar. It returns {list, more}.
export function productGrid({ path, params, first, label, card = summaryCard }) {
  const list = h("ul", { class: "cards products" }, first.data.items.map(card));
  const total = { ops: first.cost ? first.cost.ops : 0, ru: first.cost ? first.cost.ru : 0, pages: 1 };
  const more = pager({
    continuation: first.data.continuation,
    label,
    next: (continuation) => get(path + query({ ...params, continuation })),
    onPage: (page) => {
      list.append(...page.data.items.map(card));
      if (page.cost) {
        total.ops += page.cost.ops;
        total.ru += page.cost.ru;
      }
      total.pages++;
      showCost(`GET ${path} (${total.pages} pages)`,
        { ...page.cost, ops: total.ops, ru: total.ru, timing: page.cost ? page.cost.timing : null });
    },
  });
  return { list, more };
}

// The category page's own parameters: the API's (sort, and the limit and
// continuation it never puts in the address) and read, which a test or a
// link adds to render the same screen again. Every other one is an
// attribute filter (?size=M), passed on to the API as it is.
const pageParams = new Set(["sort", "limit", "continuation", "read"]);

// maxFilters is the API's bound on the filters of one page
// (domain.MaxVariantAttributes).
const maxFilters = 4;

// filtersOf reads the attribute filters of the screen's address, in the
// order given: [[name, value]…], one value per name.
function filtersOf(params) {
  const out = new Map();
  for (const [name, value] of params) {
    if (!pageParams.has(name) && value !== "" && !out.has(name)) out.set(name, value);
  }
  return [...out];
}

// categoryHash is the category page's address for sort and filters.
function categoryHash(id, sort, filters) {
  const q = new URLSearchParams();
  if (sort !== "name") q.set("sort", sort);
  for (const [name, value] of filters) q.set(name, value);
  const s = q.toString();
  return `#/c/${encodeURIComponent(id)}${s ? `?${s}` : ""}`;
}

// filterChips offers the attribute values of the products on the page
// ("size=M" strings, the summaries' copies), one row per attribute name:
// a value links to the page filtered by it (replacing another value of
// the same name), the value filtered on links back to the page without
// it. Only the first page's values are offered, which a filtered page
// narrows further; a filter in force is offered whatever the page holds.
function filterChips(id, sort, filters, items) {
  const values = new Map(filters.map(([name, value]) => [name, new Set([value])]));
  for (const p of items) {
    for (const facet of p.attributes || []) {
      const at = facet.indexOf("=");
      if (at < 1) continue;
      const name = facet.slice(0, at);
      if (!values.has(name)) values.set(name, new Set());
      values.get(name).add(facet.slice(at + 1));
    }
  }
  if (!values.size) return null;
  const active = new Map(filters);
  const rows = [...values.keys()].sort().map((name) => {
    const others = filters.filter(([n]) => n !== name);
    // A new attribute beyond the API's bound is not offered.
    if (!active.has(name) && others.length >= maxFilters) return null;
    const chips = [...values.get(name)].sort(byValue).map((value) => {
      const on = active.get(name) === value;
      return h("li", {}, h("a", {
        class: on ? "chip current" : "chip",
        href: categoryHash(id, sort, on ? others : [...others, [name, value]]),
        "aria-current": on ? "true" : null,
        "data-filter": `${name}=${value}`,
        "aria-label": on ? `${attributeName(name)} ${value}, remove this filter` : null,
      }, on ? `${value} ✕` : value));
    });
    return h("div", { class: "filter-row" },
      h("span", { class: "filter-name", id: `filter-${name}` }, attributeName(name)),
      h("ul", { class: "chips", "aria-labelledby": `filter-${name}` }, chips));
  });
  return h("nav", { class: "filters", "aria-label": "Filter by" }, rows,
    filters.length ? h("p", {}, h("a", { href: categoryHash(id, sort, []), "data-testid": "clear-filters" }, "Show all products")) : null);
}

// byValue orders attribute values as a shopper reads them: numbers by
// their value, sizes from small to large, anything else alphabetically.
const sizes = ["XXS", "XS", "S", "M", "L", "XL", "XXL", "XXXL"];
function byValue(a, b) {
  const na = Number(a), nb = Number(b);
  if (!Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
  const sa = sizes.indexOf(a.toUpperCase()), sb = sizes.indexOf(b.toUpperCase());
  if (sa >= 0 && sb >= 0) return sa - sb;
  return a.localeCompare(b);
}

// Category page: one single-partition query on productsByCategory
// (pk = categoryId), one page at a time; "Show more" follows the
// continuation token and adds its own cost to the panel. The products
// carry their category's name, so a direct link is titled right.
// Attribute filters (?size=M) go to the same query, which an index on
// the summaries' attribute array serves.
export async function category(main, [id], params) {
  // The API's sort orders (openapi.yaml: name, price, rating); any other
  // value is the default, name.
  const sort = ["price", "rating"].includes(params.get("sort")) ? params.get("sort") : "name";
  const filters = filtersOf(params);
  const base = `/v1/categories/${encodeURIComponent(id)}/products`;
  const apiParams = { sort, limit: 24, ...Object.fromEntries(filters) };
  let first;
  try {
    first = await get(base + query(apiParams));
  } catch (err) {
    // A filter the API refuses (a malformed name or value, too many) is
    // explained, with the way back to the whole department.
    if (err.status !== 400 || !filters.length) throw err;
    screenCost(main, `GET ${base} (400)`, err.cost || null);
    put(main,
      h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/" }, "Home")),
      h("h1", {}, categoryName(id)),
      h("p", { "data-testid": "filter-problem" }, problemText(err)),
      h("p", {}, h("a", { href: categoryHash(id, sort, []) }, "Show all products")));
    return;
  }
  screenCost(main, `GET ${base}`, first.cost);
  const { data } = first;
  const { list, more } = productGrid({ path: base, params: apiParams, first, label: "Show more products" });

  const sortLink = (value, label) => value === sort
    ? h("span", { "aria-current": "true", class: "chip current" }, label)
    : h("a", { class: "chip", href: categoryHash(id, value, filters) }, label);

  const name = (data.items[0] && data.items[0].categoryName) || categoryName(id);
  const shown = filters.map(([n, v]) => `${attributeName(n)} ${v}`).join(", ");
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/" }, "Home")),
    h("h1", {}, name),
    h("p", { class: "sort" }, "Sort by ", sortLink("name", "name"), " ", sortLink("price", "price"), " ", sortLink("rating", "rating")),
    filterChips(id, sort, filters, data.items),
    data.items.length ? list
      : h("p", { "data-testid": "no-products" }, filters.length ? `No products in ${shown} here.` : "No products in this department yet."),
    more,
  );
}
