// The product page (one point read: top reviews and stats are embedded)
// and the all-reviews page (a single-partition query on reviews).

import { ApiError, get, query, request, user } from "../api.js";
import {
  availabilityBadge, date, field, h, money, needSignIn, pager, problemText, put, say, screenCost, setCartCount, showCost,
  showWrite, soldOut, stars,
} from "../ui.js";
import { categoryName, thumb } from "./catalog.js";

// Product names seen on product pages in this tab, so the all-reviews
// page can name the product without a second read; a direct link to it
// names no product rather than a guessed one.
const namesKey = "shop.productNames";

function productName(id) {
  return JSON.parse(sessionStorage.getItem(namesKey) || "{}")[id] || null;
}

function rememberName(p) {
  const names = JSON.parse(sessionStorage.getItem(namesKey) || "{}");
  names[p.id] = p.name;
  sessionStorage.setItem(namesKey, JSON.stringify(names));
}

// pendingKey holds an "Add to cart" pressed while signed out: the sign-in
// screen returns to the product, which then adds it.
const pendingKey = "shop.pendingAdd";

function reviewItem(r) {
  return h("li", { class: "review" },
    h("p", { class: "review-head" }, stars(r.rating), " ", h("strong", {}, r.title)),
    h("p", {}, r.body),
    h("p", { class: "muted" }, `${r.userName} · ${date(r.createdAt)}`),
  );
}

function histogram(stats) {
  const rows = [];
  for (let star = 5; star >= 1; star--) {
    const n = stats.histogram[star - 1];
    rows.push(h("li", {},
      h("span", { class: "hist-label" }, `${star} star`),
      h("meter", { min: 0, max: Math.max(stats.count, 1), value: n, "aria-label": `${star} star reviews` }),
      h("span", { class: "hist-count" }, String(n))));
  }
  return h("ul", { class: "histogram" }, rows);
}

// addToCart adds qty of p; button, when given, is disabled while the
// request is in flight, so a double click adds once.
async function addToCart(p, qty, button) {
  if (!user()) {
    sessionStorage.setItem(pendingKey, JSON.stringify({ productId: p.id, quantity: qty }));
    needSignIn("cart");
    return;
  }
  if (button) button.disabled = true;
  try {
    // POST adds to the line's quantity; the server copies the product's
    // current name and price into the cart line (model-denormalize-reads).
    const { data, cost } = await request("POST", `/v1/cart/items/${encodeURIComponent(p.id)}`,
      { body: { quantity: qty } });
    showWrite("Added to cart", cost);
    setCartCount(data.itemCount);
    const line = (data.items || []).find((l) => l.productId === p.id);
    const held = line ? line.quantity : qty;
    say(`In your cart: ${held} × ${p.name}. The cart has ${data.itemCount} item${data.itemCount === 1 ? "" : "s"}.`, "ok");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      sessionStorage.setItem(pendingKey, JSON.stringify({ productId: p.id, quantity: qty }));
      return needSignIn("cart");
    }
    say(problemText(err), "error");
  } finally {
    if (button) button.disabled = false;
  }
}

// addPending adds what was put in the cart before signing in, once.
function addPending(p) {
  const pending = JSON.parse(sessionStorage.getItem(pendingKey) || "null");
  if (!pending || pending.productId !== p.id || !user()) return;
  sessionStorage.removeItem(pendingKey);
  addToCart(p, pending.quantity);
}

// Product page: ONE point read in products (model-embed-related).
export async function product(main, [id]) {
  const { data: p, cost } = await get(`/v1/products/${encodeURIComponent(id)}`);
  screenCost(main, `GET /v1/products/${id}`, cost);
  rememberName(p);

  // A sold-out product cannot go in the cart: the button is disabled and
  // says why (the reason is its description, so a screen reader reads it).
  const out = soldOut(p);
  const qty = h("input", {
    id: "qty", type: "number", min: "1", max: "99", value: "1", inputmode: "numeric", required: true, disabled: out,
  });
  const buy = h("button", { type: "submit", disabled: out, "aria-describedby": out ? "buy-reason" : null }, "Add to cart");
  const form = h("form", {
    class: "buy", onsubmit: (e) => {
      e.preventDefault();
      const n = Number(qty.value);
      if (!Number.isInteger(n) || n < 1 || n > 99) {
        say("Choose a quantity from 1 to 99.", "error");
        qty.focus();
        return;
      }
      addToCart(p, n, buy);
    },
  },
  field("Quantity", qty),
  buy,
  out ? h("p", { id: "buy-reason", class: "buy-reason" }, "Sold out: it can go in your cart again once it is back in stock.") : null);

  const badge = availabilityBadge(p);
  const u = user();
  const s = p.reviewStats || { count: 0, average: 0, histogram: [0, 0, 0, 0, 0] };
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" },
      h("a", { href: "#/" }, "Home"), " › ",
      h("a", { href: `#/c/${encodeURIComponent(p.categoryId)}` }, p.categoryName || categoryName(p.categoryId))),
    h("article", { class: "product-page" },
      thumb(p.imageUrl, p.name, true),
      h("div", { class: "product-main" },
        h("h1", {}, p.name),
        h("p", { class: "price big", "data-testid": "price" }, money(p.priceCents, p.currency)),
        badge ? h("p", { class: "availability" }, badge) : null,
        h("p", {}, p.description),
        form,
        u && u.admin ? h("p", {}, h("a", { href: `#/admin?product=${encodeURIComponent(p.id)}` }, "Change the price or the stock (admin)")) : null)),
    h("section", { "aria-labelledby": "reviews-h" },
      h("h2", { id: "reviews-h" }, "Reviews"),
      s.count
        ? h("p", {}, stars(s.average), ` ${s.average.toFixed(2)} out of 5 from ${s.count} review${s.count === 1 ? "" : "s"}`)
        : h("p", {}, "No reviews yet."),
      s.count ? histogram(s) : null,
      // "Newest reviews" only above reviews: no empty heading.
      (p.topReviews || []).length ? h("h3", {}, "Newest reviews") : null,
      (p.topReviews || []).length ? h("ul", { class: "reviews" }, p.topReviews.map(reviewItem)) : null,
      h("p", {}, h("a", { href: `#/p/${encodeURIComponent(p.id)}/reviews` },
        s.count > (p.topReviews || []).length ? `All ${s.count} reviews` : "All reviews and write one"))),
  );
  addPending(p);
}

function reviewForm(productId, onCreated) {
  const rating = h("select", { id: "rating", required: true },
    h("option", { value: "" }, "Choose…"),
    [5, 4, 3, 2, 1].map((n) => h("option", { value: String(n) }, `${n} star${n === 1 ? "" : "s"}`)));
  const title = h("input", { id: "title", type: "text", maxlength: "200", required: true });
  const body = h("textarea", { id: "body", rows: "4", maxlength: "5000" });
  const submit = h("button", { type: "submit" }, "Post review");
  return h("form", {
    class: "stack", onsubmit: async (e) => {
      e.preventDefault();
      submit.disabled = true;
      try {
        const { data, cost } = await request("POST", `/v1/products/${encodeURIComponent(productId)}/reviews`, {
          body: { rating: Number(rating.value), title: title.value, body: body.value },
        });
        showWrite("Posted review", cost);
        say("Thank you: your review is posted. The product page shows it once the reviews feed has updated the stats.", "ok");
        onCreated(data);
        e.target.reset();
      } catch (err) {
        if (err.status === 401) return needSignIn("review");
        say(err.status === 409 ? "You have already reviewed this product." : problemText(err), "error");
      } finally {
        submit.disabled = false;
      }
    },
  },
  h("h2", { id: "write-h" }, "Write a review"),
  field("Rating", rating), field("Title", title), field("Review (optional)", body), submit);
}

// All reviews: a single-partition query on reviews (pk = productId),
// newest first, one page per request.
export async function reviews(main, [id]) {
  const base = `/v1/products/${encodeURIComponent(id)}/reviews`;
  const { data, cost } = await get(base + query({ limit: 10 }));
  screenCost(main, `GET ${base}`, cost);
  const list = h("ul", { class: "reviews" }, data.items.map(reviewItem));
  const more = pager({
    continuation: data.continuation,
    label: "Show more reviews",
    next: (continuation) => get(base + query({ limit: 10, continuation })),
    onPage: (page) => {
      showCost(`GET ${base} (next page)`, page.cost);
      list.append(...page.data.items.map(reviewItem));
    },
  });

  const empty = h("p", { "data-testid": "no-reviews" }, "No reviews yet. Be the first.");
  const name = productName(id);
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" },
      h("a", { href: "#/" }, "Home"), " › ", h("a", { href: `#/p/${encodeURIComponent(id)}` }, name || "Back to the product")),
    h("h1", {}, name ? `Reviews of ${name}` : "Reviews"),
    // The list is on the page even while empty, so the first review
    // posted has somewhere to go; the empty-state line leaves with it.
    list,
    data.items.length ? null : empty,
    more,
    user()
      ? reviewForm(id, (r) => {
        list.prepend(reviewItem(r));
        empty.remove();
      })
      : h("p", {}, h("a", { href: `#/signin?next=${encodeURIComponent(`#/p/${id}/reviews`)}&why=review` }, "Sign in"), " to write a review."),
  );
}
