// Small shared pieces of the views: a DOM builder (no innerHTML, so no
// text from the API is ever parsed as HTML), money and date formatting,
// the cost bar, the cart badge, the status line and the "show more" pager.

import { user } from "./api.js";

// h builds an element: h("a", {href: "#/"}, "Home"). Attributes starting
// with "on" become listeners; null/false children are skipped.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === "class") el.className = v;
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// money formats integer minor units: 1999 → "€19.99". Money is never a
// float in the shop; only display divides by 100.
export function money(cents, currency = "USD") {
  return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(cents / 100);
}

// parseMoney turns "19.99" into 1999, or null when it is not a price.
export function parseMoney(text) {
  const m = /^\s*(\d{1,7})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] || "0").padEnd(2, "0"));
}

export function date(iso) {
  if (!iso) return "";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

// stars draws a rating to the nearest half star, as a search result
// carries it (domain.ShownRating), so a product draws the same stars on
// every screen; screen readers get the words, not the glyphs. A half star
// is a filled star clipped to its left half over an empty one.
export function stars(rating) {
  const halves = Math.round(Math.min(Math.max(rating, 0), 5) * 2);
  const full = Math.floor(halves / 2), half = halves % 2;
  return h("span", {},
    h("span", { class: "stars", "aria-hidden": "true" },
      "★".repeat(full),
      half ? h("span", { class: "half-star" }, "☆", h("span", {}, "★")) : null,
      "☆".repeat(5 - full - half)),
    h("span", { class: "visually-hidden" }, `${rating} out of 5 stars`));
}

// costText: "1 store op · 1.00 RU · 0.31 ms". The Request Units are
// labelled an estimate only when the response said so
// (X-Request-Charge-Estimated, the embedded store): on Cosmos they are
// the real charge.
export function costText(cost) {
  if (!cost) return "no store cost reported";
  const ops = `${cost.ops} store op${cost.ops === 1 ? "" : "s"}`;
  const ru = `${cost.ru.toFixed(2)} RU${cost.estimated ? " (estimate)" : ""}`;
  const parts = [ops, ru];
  if (cost.timing !== null && !Number.isNaN(cost.timing)) parts.push(`${cost.timing.toFixed(2)} ms`);
  return parts.join(" · ");
}

// The cost bar shows the read that rendered the screen and, next to it,
// the write that came just before or after it: "Placed order: 7 store
// ops · 32.80 RU, then GET /v1/orders/o-1: 1 store op · 1.00 RU". A write
// that moves on to another screen is shown before that screen's read.
let bar = { read: null, write: null, writeFirst: false };
let pendingWrite = null;

function costTitle(cost) {
  if (!cost) return "";
  return cost.estimated
    ? "Request Units: the embedded store's documented estimate (X-Request-Charge-Estimated)"
    : "Request Units: the charge the store reported";
}

function drawBar() {
  // The store time is its own span, which a phone's narrow bar leaves out.
  const part = (p, labelClass, testid) => [
    h("span", { class: labelClass }, p.label),
    p.cost ? ": " : " ",
    h("strong", { "data-testid": testid, title: costTitle(p.cost) }, costText(p.cost && { ...p.cost, timing: null })),
    p.cost && p.cost.timing !== null && !Number.isNaN(p.cost.timing)
      ? h("span", { class: "cost-time" }, ` · ${p.cost.timing.toFixed(2)} ms`) : null,
  ];
  const read = bar.read ? part(bar.read, "cost-label", "cost") : [];
  const write = bar.write ? part(bar.write, "cost-write", "write-cost") : [];
  const parts = !bar.write ? read
    : bar.writeFirst ? [...write, ", then ", ...read]
      : [...read, "; then ", ...write];
  const panel = document.getElementById("cost");
  put(panel, ...parts);
  panel.title = panel.textContent;
}

// showCost shows the read that rendered the screen (or one more page of
// it), after the write that led to it, if any.
export function showCost(label, cost) {
  bar = { read: { label, cost }, write: pendingWrite, writeFirst: Boolean(pendingWrite) };
  pendingWrite = null;
  drawBar();
}

// showWrite shows what a write cost ("Added to cart"), next to the
// screen's read, and keeps it for the read that follows.
export function showWrite(label, cost) {
  bar = { read: bar.read, write: { label, cost }, writeFirst: false };
  pendingWrite = { label, cost };
  drawBar();
}

// screenCost records the cost of the read that rendered a screen; the
// router shows it when the screen goes up (and not if the visitor has
// moved on by then).
export function screenCost(screen, label, cost) {
  screen.costLabel = label;
  screen.cost = cost;
}

// put replaces el's children, skipping null, undefined and false (which
// replaceChildren would print as text).
export function put(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

// The cart badge: the item count of the last cart response this tab saw,
// kept per user, so showing it costs no read.
const cartCountKey = "shop.cartCount";

export function cartCount() {
  const kept = JSON.parse(sessionStorage.getItem(cartCountKey) || "null");
  const u = user();
  return kept && u && kept.user === u.id ? kept.count : null;
}

// setCartCount keeps the count of a cart response (null: forget it) and
// updates the badge in the header.
export function setCartCount(count) {
  const u = user();
  if (count === null || !u) sessionStorage.removeItem(cartCountKey);
  else sessionStorage.setItem(cartCountKey, JSON.stringify({ user: u.id, count }));
  const badge = document.getElementById("cart-count");
  if (badge) put(badge, ...cartBadgeText(cartCount()));
}

// cartBadgeText is the badge's content: the number, with words for
// screen readers.
export function cartBadgeText(count) {
  if (!count) return [];
  return [h("span", { class: "visually-hidden" }, ", "), String(count), h("span", { class: "visually-hidden" }, count === 1 ? " item" : " items")];
}

// say puts a message in the page's aria-live status line; kind is "ok",
// "error" or "info".
// A message survives the next navigation (a view often says "saved" and
// then moves on) and is cleared by the one after.
export function say(text, kind = "info") {
  const status = document.getElementById("status");
  status.className = `status status-${kind}`;
  status.textContent = text;
  status.dataset.keep = text ? "1" : "";
}

// navigated is called by the router on every screen change.
export function navigated() {
  const status = document.getElementById("status");
  if (status.dataset.keep) status.dataset.keep = "";
  else status.textContent = "";
}

// The words of a product's availability status (the copy the product,
// the category page and the cart lines carry).
const availabilityWords = { in_stock: "In stock", low_stock: "Only a few left", sold_out: "Sold out" };

export function availabilityText(status) {
  return availabilityWords[status] || availabilityWords.in_stock;
}

export function soldOut(item) {
  return (item && item.availability && item.availability.status) === "sold_out";
}

// availabilityBadge says "Sold out" or "Only a few left" in words (the
// colour only repeats them); nothing while the product is in stock.
export function availabilityBadge(item) {
  const status = item && item.availability && item.availability.status;
  if (status !== "sold_out" && status !== "low_stock") return null;
  return h("span", { class: `badge stock-${status}`, "data-testid": "availability" }, availabilityText(status));
}

// lineKey names a cart or order line by its product and, for a variant,
// its SKU ("p-0147/tee-m"), as the API's refusals do (domain.LineLabel):
// the key of the maps that flag or name lines.
export function lineKey(productId, sku) {
  return sku ? `${productId}/${sku}` : productId;
}

// attributeName is an attribute's name in words: "size" → "Size",
// "fit_type" → "Fit type".
export function attributeName(name) {
  const words = name.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// attributesText says a variant's attribute values: "Colour navy · Size M"
// (the names in order, so every screen says them alike); "" for none.
export function attributesText(attributes) {
  return Object.keys(attributes || {}).sort()
    .map((name) => `${attributeName(name)} ${attributes[name]}`).join(" · ");
}

// lineName is the name of a cart or order line in a sentence: the
// product's, and its variant's values after it ("Tee (Size M)").
export function lineName(l) {
  const values = attributesText(l.attributes);
  return values ? `${l.name} (${values})` : l.name;
}

// lineNames maps the lines' keys (lineKey) to their names (lineName), for
// problemText and shortagesText.
export function lineNames(lines) {
  return Object.fromEntries((lines || []).map((l) => [lineKey(l.productId, l.sku), lineName(l)]));
}

// productLink is the product page of a line, its variant chosen there.
export function productLink(l) {
  return `#/p/${encodeURIComponent(l.productId)}${l.sku ? `?sku=${encodeURIComponent(l.sku)}` : ""}`;
}

// attributesLine shows a line's variant under its name; null for a
// product sold as one.
export function attributesLine(l) {
  const values = attributesText(l.attributes);
  return values ? h("span", { class: "line-attributes", "data-testid": "attributes" }, values) : null;
}

const outOfStock = "https://shop.example/problems/out-of-stock";

// shortages returns the lines an out-of-stock checkout could not serve
// (the problem's items), or [] for any other error.
export function shortages(err) {
  const p = err && err.problem;
  return p && p.type === outOfStock && Array.isArray(p.items) ? p.items : [];
}

// shortageText names one short line: "Only 2 left of Lamp (you asked for
// 3)", "Lamp is sold out (you asked for 1)".
export function shortageText(s, name = lineKey(s.productId, s.sku)) {
  return s.available > 0
    ? `Only ${s.available} left of ${name} (you asked for ${s.requested})`
    : `${name} is sold out (you asked for ${s.requested})`;
}

// shortagesText explains the lines a checkout could not serve (an
// out-of-stock problem's items, or a rejected order's), by the names the
// page shows (names: lineKey → name, as lineNames builds it).
export function shortagesText(items, names = {}) {
  return `Not enough in stock, so nothing was ordered: ${items.map((s) => shortageText(s, names[lineKey(s.productId, s.sku)])).join("; ")}. ` +
    "Change the quantities in your cart, then place the order again.";
}

// fieldName turns a JSON pointer's last segment into words:
// "/shippingAddress/postalCode" → "Postal code".
export function fieldName(pointer, labels = {}) {
  const key = pointer.split("/").pop();
  if (labels[key]) return labels[key].replace(/ \(optional\)$/, "");
  const words = key.replace(/([a-z])([A-Z0-9])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// problemText explains an ApiError in plain words. names maps line keys
// (lineKey) to the names the page shows (the cart's), so that an out-of-stock
// checkout names the products rather than their ids; labels maps a
// field's key to its label on the form.
export function problemText(err, names = {}, labels = {}) {
  if (err.status === 0) return "The shop could not be reached. Check your connection and try again.";
  if (!err.status) return "Something went wrong on this page. Please reload it.";
  const short = shortages(err);
  if (short.length) return shortagesText(short, names);
  const fields = Object.entries(err.fieldErrors || {});
  if (fields.length) return `Please check the form: ${fields.map(([p, d]) => `${fieldName(p, labels)} ${d}`).join("; ")}.`;
  if (err.status === 404) return "We could not find that: it may have been removed, or the link may be mistyped.";
  if (err.status === 429 || err.status === 503) return "The shop is busy right now. Please try again in a moment.";
  if (err.status >= 500) return "Something went wrong on our side. Please try again.";
  const text = err.message || "";
  return text ? text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? "" : ".") : "The request was refused.";
}

// field is a labelled form control; the label's for= points at the id.
export function field(label, control, hint) {
  const hintId = hint ? `${control.id}-hint` : null;
  if (hintId) control.setAttribute("aria-describedby", hintId);
  return h("div", { class: "field" },
    h("label", { for: control.id }, label),
    control,
    hint ? h("small", { id: hintId, class: "hint" }, hint) : null,
  );
}

// pager is the "show more" under a list read one page at a time: its
// button reads the next page (next(continuation) resolves to the API's
// {data, cost}), hands it to onPage, and follows the page's continuation
// until there is none.
export function pager({ continuation, next, onPage, label = "Show more" }) {
  const more = h("div", { class: "more" });
  function offer(continuation) {
    more.replaceChildren();
    if (!continuation) return;
    more.append(h("button", {
      type: "button", class: "secondary", onclick: async (e) => {
        e.target.disabled = true;
        const page = await next(continuation);
        onPage(page);
        offer(page.data.continuation);
      },
    }, label));
  }
  offer(continuation);
  return more;
}

// go navigates to a screen; going to the current one renders it again.
export function go(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}

// needSignIn sends the visitor to the sign-in screen and back afterwards;
// why is a key of the sign-in screen's reasons ("cart", "orders"…).
export function needSignIn(why = "") {
  go(`#/signin?next=${encodeURIComponent(location.hash || "#/")}${why ? `&why=${why}` : ""}`);
}
