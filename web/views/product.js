// The product page (one point read: top reviews and stats are embedded)
// and the all-reviews page (a single-partition query on reviews).

import { ApiError, get, query, request, user } from "../api.js";
import {
  attributeName, attributesText, availabilityBadge, availabilityText, date, field, h, money, needSignIn, pager, problemText,
  put, say, screenCost, setCartCount, showCost, showWrite, soldOut, stars,
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

// addToCart adds qty of p, of its variant sku ("" for a product sold as
// one); button, when given, is disabled while the request is in flight,
// so a double click adds once.
async function addToCart(p, sku, qty, button) {
  const pending = () => sessionStorage.setItem(pendingKey, JSON.stringify({ productId: p.id, sku, quantity: qty }));
  if (!user()) {
    pending();
    needSignIn("cart");
    return;
  }
  if (button) button.disabled = true;
  const v = sku ? (p.variants || []).find((x) => x.sku === sku) : null;
  const name = v ? `${p.name} (${attributesText(v.attributes)})` : p.name;
  try {
    // POST adds to the line's quantity; the server copies the product's
    // current name and the variant's price into the cart line
    // (model-denormalize-reads). A variant is named by ?sku=.
    const { data, cost } = await request("POST",
      `/v1/cart/items/${encodeURIComponent(p.id)}${sku ? `?sku=${encodeURIComponent(sku)}` : ""}`,
      { body: { quantity: qty } });
    showWrite("Added to cart", cost);
    setCartCount(data.itemCount);
    const line = (data.items || []).find((l) => l.productId === p.id && (l.sku || "") === sku);
    const held = line ? line.quantity : qty;
    say(`In your cart: ${held} × ${name}. The cart has ${data.itemCount} item${data.itemCount === 1 ? "" : "s"}.`, "ok");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      pending();
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
  addToCart(p, pending.sku || "", pending.quantity);
}

// attributeNames are the names p's variants are told apart by, sorted
// (as the cart line says them); [] for a product sold as one.
function attributeNames(variants) {
  const names = new Set();
  for (const v of variants) for (const name of Object.keys(v.attributes || {})) names.add(name);
  return [...names].sort();
}

// priceText is what a set of variants costs: one price, or "from" the
// lowest when they differ.
function priceText(variants, currency) {
  const prices = variants.map((v) => v.priceCents);
  const lo = Math.min(...prices);
  return lo === Math.max(...prices) ? money(lo, currency) : `From ${money(lo, currency)}`;
}

// variantPicker is the product page's choice of a variant: one group of
// radio buttons per attribute name (a fieldset, so each group is named),
// each value with the price and the availability it leads to. A value
// whose variants are all sold out is disabled and says so; a value that
// does not go with the other choices made (no such variant) stays
// enabled, and choosing it drops them. chosen() is the variant every
// group's choice names, or null until each group has one; missing() the
// names not chosen yet. onChange(variant or null) follows every choice.
function variantPicker(p, initial, onChange) {
  const variants = p.variants;
  const names = attributeNames(variants);
  const choice = initial ? { ...initial.attributes } : {};
  const matches = (v, except) => names.every((n) => n === except || !(n in choice) || v.attributes[n] === choice[n]);
  const options = [];

  function candidates(name, value) {
    const withValue = variants.filter((v) => v.attributes[name] === value);
    const fitting = withValue.filter((v) => matches(v, name));
    return fitting.length ? fitting : withValue;
  }

  function chosen() {
    if (names.some((n) => !(n in choice))) return null;
    return variants.find((v) => matches(v)) || null;
  }

  function update() {
    for (const o of options) {
      const vs = candidates(o.name, o.value);
      const out = vs.every(soldOut);
      o.input.checked = choice[o.name] === o.value;
      o.input.disabled = out;
      const low = vs.length === 1 && vs[0].availability && vs[0].availability.status === "low_stock";
      o.note.textContent = `${priceText(vs, p.currency)}${out ? ` · ${availabilityText("sold_out")}` : low ? ` · ${availabilityText("low_stock")}` : ""}`;
      o.label.classList.toggle("sold-out", out);
    }
  }

  function pick(name, value) {
    choice[name] = value;
    // A choice no buyable variant goes with keeps only itself.
    if (!variants.some((v) => matches(v) && !soldOut(v))) {
      for (const n of names) if (n !== name) delete choice[n];
    }
    update();
    onChange(chosen());
  }

  const groups = names.map((name) => {
    const values = [...new Set(variants.map((v) => v.attributes[name]).filter((x) => x !== undefined))];
    return h("fieldset", { class: "variants", "data-attribute": name },
      h("legend", {}, attributeName(name)),
      h("div", { class: "variant-options" }, values.map((value, i) => {
        const input = h("input", {
          type: "radio", name: `variant-${name}`, value, id: `variant-${name}-${i}`,
          onchange: () => pick(name, value),
        });
        const note = h("span", { class: "variant-note" });
        const label = h("label", { class: "variant-option", for: input.id }, input, h("span", { class: "variant-value" }, value), note);
        options.push({ name, value, input, note, label });
        return label;
      })));
  });
  update();
  return {
    element: h("div", { class: "variant-picker", "data-testid": "variant-picker" }, groups),
    chosen,
    missing: () => names.filter((n) => !(n in choice)),
    focusMissing() {
      const name = names.find((n) => !(n in choice));
      const o = options.find((x) => x.name === name && !x.input.disabled);
      if (o) o.input.focus();
    },
  };
}

// firstVariant is the variant the page opens on: the one ?sku= names (a
// cart line's link), else the only one that can be bought; null (the
// shopper chooses) when several can.
function firstVariant(variants, sku) {
  const named = sku && variants.find((v) => v.sku === sku);
  if (named) return named;
  const buyable = variants.filter((v) => !soldOut(v));
  return buyable.length === 1 ? buyable[0] : variants.length === 1 ? variants[0] : null;
}

// Product page: ONE point read in products (model-embed-related). A
// product with variants shows a picker; the price, the picture, the
// availability and "Add to cart" follow the variant chosen. ?sku= opens
// the page on that variant.
export async function product(main, [id], params) {
  const { data: p, cost } = await get(`/v1/products/${encodeURIComponent(id)}`);
  screenCost(main, `GET /v1/products/${id}`, cost);
  rememberName(p);
  const variants = p.variants || [];

  // A sold-out product or variant cannot go in the cart: the button is
  // disabled and says why (the reason is its description, so a screen
  // reader reads it).
  const qty = h("input", { id: "qty", type: "number", min: "1", max: "99", value: "1", inputmode: "numeric", required: true });
  const buy = h("button", { type: "submit" }, "Add to cart");
  const reason = h("p", { id: "buy-reason", class: "buy-reason" },
    "Sold out: it can go in your cart again once it is back in stock.");
  const price = h("p", { class: "price big", "data-testid": "price" });
  const picture = h("div", { class: "product-picture" });
  const availability = h("p", { class: "availability" });

  let picker = null;
  // show puts the variant v (null: none chosen yet, or no variants) on
  // the page: its price, picture and availability, and whether it can
  // be bought.
  function show(v) {
    const item = v || p;
    put(price, v ? money(v.priceCents, p.currency) : variants.length ? priceText(variants, p.currency) : money(p.priceCents, p.currency));
    put(picture, thumb((v && v.imageUrl) || p.imageUrl, p.name, true));
    const badge = availabilityBadge(item);
    put(availability, badge);
    availability.hidden = !badge;
    const out = soldOut(item);
    qty.disabled = out;
    buy.disabled = out;
    if (out) buy.setAttribute("aria-describedby", "buy-reason");
    else buy.removeAttribute("aria-describedby");
    reason.hidden = !out;
  }

  const form = h("form", {
    class: "buy", onsubmit: (e) => {
      e.preventDefault();
      const v = picker && picker.chosen();
      if (picker && !v) {
        const missing = picker.missing().map((n) => attributeName(n).toLowerCase());
        say(`Choose a ${missing.join(" and a ")} first.`, "error");
        picker.focusMissing();
        return;
      }
      const n = Number(qty.value);
      if (!Number.isInteger(n) || n < 1 || n > 99) {
        say("Choose a quantity from 1 to 99.", "error");
        qty.focus();
        return;
      }
      addToCart(p, v ? v.sku : "", n, buy);
    },
  },
  field("Quantity", qty),
  buy,
  reason);

  const first = variants.length ? firstVariant(variants, params && params.get("sku")) : null;
  if (variants.length) {
    picker = variantPicker(p, first, (v) => {
      show(v);
      // The address names the variant chosen, so a reload or a shared
      // link opens on it; replaceState moves no screen.
      if (v) history.replaceState(null, "", `#/p/${encodeURIComponent(p.id)}?sku=${encodeURIComponent(v.sku)}`);
    });
  }
  show(first);

  const u = user();
  const s = p.reviewStats || { count: 0, average: 0, histogram: [0, 0, 0, 0, 0] };
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" },
      h("a", { href: "#/" }, "Home"), " › ",
      h("a", { href: `#/c/${encodeURIComponent(p.categoryId)}` }, p.categoryName || categoryName(p.categoryId))),
    h("article", { class: "product-page" },
      picture,
      h("div", { class: "product-main" },
        h("h1", {}, p.name),
        price,
        availability,
        h("p", {}, p.description),
        picker ? picker.element : null,
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
