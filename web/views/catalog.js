// Home (the category list) and the category page.

import { get, query } from "../api.js";
import { availabilityBadge, h, money, pager, screenCost, showCost, stars } from "../ui.js";

// Category names seen on the home screen, kept for the browser session, so
// the category page can title itself without a second read (its one read is
// a page of the category's productsByCategory partition).
const namesKey = "shop.categoryNames";

export function categoryName(id) {
  const names = JSON.parse(sessionStorage.getItem(namesKey) || "{}");
  return names[id] || id.replace(/[-_]/g, " ").replace(/^./, (c) => c.toUpperCase());
}

// Home: one point read of the categories index document.
export async function home(main) {
  const { data, cost } = await get("/v1/categories");
  screenCost(main, "GET /v1/categories", cost);
  sessionStorage.setItem(namesKey, JSON.stringify(Object.fromEntries(data.items.map((c) => [c.id, c.name]))));
  main.replaceChildren(
    h("h1", {}, "Categories"),
    h("ul", { class: "cards categories" },
      data.items.map((c) => h("li", { class: "card" },
        h("a", { href: `#/c/${encodeURIComponent(c.id)}` },
          h("span", { class: "card-title" }, c.name),
          h("span", { class: "muted" }, `${c.productCount} product${c.productCount === 1 ? "" : "s"}`))))),
  );
}

export function thumb(imageUrl, name) {
  const box = h("div", { class: "thumb", "aria-hidden": "true" }, name.slice(0, 1));
  if (imageUrl) {
    const img = h("img", { src: imageUrl, alt: "", loading: "lazy" });
    img.addEventListener("error", () => img.remove());
    box.append(img);
  }
  return box;
}

// summaryCard is one product of the grid; its availability is the copy the
// productsByCategory item carries, so the badge costs no read.
function summaryCard(p) {
  return h("li", { class: "card product", "data-product": p.id },
    thumb(p.imageUrl, p.name),
    h("a", { href: `#/p/${encodeURIComponent(p.id)}`, class: "card-title" }, p.name),
    h("span", { class: "price" }, money(p.priceCents, p.currency)),
    availabilityBadge(p),
    p.reviewCount
      ? h("span", { class: "muted" }, stars(p.averageRating), ` ${p.averageRating.toFixed(1)} (${p.reviewCount})`)
      : h("span", { class: "muted" }, "No reviews yet"),
  );
}

// Category page: one single-partition query on productsByCategory
// (pk = categoryId), one page at a time; "Show more" follows the
// continuation token and adds its own cost to the panel.
export async function category(main, [id], params) {
  const sort = params.get("sort") === "price" ? "price" : "name";
  const base = `/v1/categories/${encodeURIComponent(id)}/products`;
  const { data, cost } = await get(base + query({ sort, limit: 24 }));
  screenCost(main, `GET ${base}`, cost);

  const list = h("ul", { class: "cards products" }, data.items.map(summaryCard));
  const total = { ops: cost ? cost.ops : 0, ru: cost ? cost.ru : 0, pages: 1 };
  const more = pager({
    continuation: data.continuation,
    label: "Show more products",
    next: (continuation) => get(base + query({ sort, limit: 24, continuation })),
    onPage: (page) => {
      list.append(...page.data.items.map(summaryCard));
      if (page.cost) {
        total.ops += page.cost.ops;
        total.ru += page.cost.ru;
      }
      total.pages++;
      showCost(`GET ${base} (${total.pages} pages)`,
        { ...page.cost, ops: total.ops, ru: total.ru, timing: page.cost ? page.cost.timing : null });
    },
  });

  const sortLink = (value, label) => value === sort
    ? h("span", { "aria-current": "true", class: "chip current" }, label)
    : h("a", { class: "chip", href: `#/c/${encodeURIComponent(id)}?sort=${value}` }, label);

  main.replaceChildren(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/" }, "Categories")),
    h("h1", {}, categoryName(id)),
    h("p", { class: "sort" }, "Sort by ", sortLink("name", "name"), " ", sortLink("price", "price")),
    data.items.length ? list : h("p", {}, "No products in this category yet."),
    more,
  );
}
