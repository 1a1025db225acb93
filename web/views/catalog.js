// Home (the featured products and the categories) and the category page.

import { get, query } from "../api.js";
import { availabilityBadge, h, money, pager, put, screenCost, showCost, stars } from "../ui.js";

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

// productCard is one product of a grid, with its rating line; its
// availability is the copy the summary carries, so the badge costs no read.
function productCard(p, rating) {
  return h("li", { class: "card product", "data-product": p.id },
    h("a", { href: `#/p/${encodeURIComponent(p.id)}`, class: "card-image", tabindex: "-1", "aria-hidden": "true" },
      thumb(p.imageUrl, p.name)),
    h("a", { href: `#/p/${encodeURIComponent(p.id)}`, class: "card-title" }, p.name),
    h("span", { class: "price" }, money(p.priceCents, p.currency)),
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

// Category page: one single-partition query on productsByCategory
// (pk = categoryId), one page at a time; "Show more" follows the
// continuation token and adds its own cost to the panel. The products
// carry their category's name, so a direct link is titled right.
export async function category(main, [id], params) {
  // The API's sort orders (openapi.yaml: name, price, rating); any other
  // value is the default, name.
  const sort = ["price", "rating"].includes(params.get("sort")) ? params.get("sort") : "name";
  const base = `/v1/categories/${encodeURIComponent(id)}/products`;
  const first = await get(base + query({ sort, limit: 24 }));
  screenCost(main, `GET ${base}`, first.cost);
  const { data } = first;
  const { list, more } = productGrid({ path: base, params: { sort, limit: 24 }, first, label: "Show more products" });

  const sortLink = (value, label) => value === sort
    ? h("span", { "aria-current": "true", class: "chip current" }, label)
    : h("a", { class: "chip", href: `#/c/${encodeURIComponent(id)}?sort=${value}` }, label);

  const name = (data.items[0] && data.items[0].categoryName) || categoryName(id);
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/" }, "Home")),
    h("h1", {}, name),
    h("p", { class: "sort" }, "Sort by ", sortLink("name", "name"), " ", sortLink("price", "price"), " ", sortLink("rating", "rating")),
    data.items.length ? list : h("p", {}, "No products in this department yet."),
    more,
  );
}
