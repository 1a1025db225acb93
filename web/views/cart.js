// The cart: one point read in carts (id = partition key = the user). Each
// line carries copies of the product's name and price, so the screen needs
// no product reads (model-denormalize-reads). Changes send If-Match with the
// cart's ETag: a cart changed elsewhere answers 412 instead of being
// silently overwritten (optimistic concurrency).

import { ApiError, get, request, user } from "../api.js";
import {
  attributesLine, availabilityBadge, date, h, lineKey, lineName, money, needSignIn, problemText, productLink, put, say,
  screenCost, setCartCount, shortageText, showCost, showWrite, soldOut,
} from "../ui.js";

const staleCart = "Your cart changed in another tab; we reloaded it — check and try again.";

// short holds the lines the last checkout could not serve (lineKey →
// the problem's {productId, sku, requested, available}), so the cart
// flags them until their quantity changes or a checkout goes through.
export const short = new Map();

// isShort: the last checkout could not serve line l.
export function isShort(l) {
  return short.has(lineKey(l.productId, l.sku));
}

// shortNote flags a line the stock could not serve, naming it as the cart
// does; null for any other line.
export function shortNote(l) {
  const s = short.get(lineKey(l.productId, l.sku));
  if (!s) return null;
  return h("span", { class: "short-note", "data-testid": "short" }, `${shortageText(s, lineName(l))}.`);
}

// itemPath is the API path of a cart line: a variant is named by ?sku=.
function itemPath(productId, sku) {
  return `/v1/cart/items/${encodeURIComponent(productId)}${sku ? `?sku=${encodeURIComponent(sku)}` : ""}`;
}

// loadCart reads the cart and its ETag, and keeps its item count for the
// header's badge.
export async function loadCart() {
  const { data, cost, etag } = await get("/v1/cart");
  setCartCount(data.itemCount);
  // A shortage flagged by an earlier refusal holds only for the line as it
  // was refused: one removed, or whose quantity changed since (here or in
  // another tab), is no longer flagged when the shopper comes back.
  for (const [key, s] of short) {
    const l = (data.items || []).find((x) => lineKey(x.productId, x.sku) === key);
    if (!l || l.quantity !== s.requested) short.delete(key);
  }
  return { cart: data, cost, etag };
}

// unbuyable: a line the shop cannot sell now (sold out or withdrawn).
export function unbuyable(l) {
  return !l.available || soldOut(l);
}

// blockedText says which lines keep the cart from checkout.
export function blockedText(lines) {
  return `Remove ${lines.map(lineName).join(", ")} to check out: ${lines.length === 1 ? "it is" : "they are"} not available now.`;
}

// The words of a cart change in the cost bar.
const changeWords = { PUT: "Changed the quantity", DELETE: "Removed a line" };

export async function cart(main) {
  if (!user()) return needSignIn();
  let { cart: current, cost, etag } = await loadCart();
  screenCost(main, "GET /v1/cart", cost);
  const body = h("div", { class: "cart" });

  // change sends one write with If-Match; a 412 means our copy is stale:
  // reload, show what is there now, and let the person decide again.
  async function change(method, l, payload, done) {
    try {
      const res = await request(method, itemPath(l.productId, l.sku), {
        body: payload,
        etag,
      });
      showWrite(changeWords[method], res.cost);
      current = res.data;
      setCartCount(current.itemCount);
      etag = res.etag;
      short.delete(lineKey(l.productId, l.sku));
      draw();
      say(done, "ok");
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return needSignIn();
      if (err instanceof ApiError && err.status === 412) {
        const fresh = await loadCart();
        current = fresh.cart;
        etag = fresh.etag;
        showCost("GET /v1/cart (reloaded after 412)", fresh.cost);
        draw();
        say(staleCart, "error");
        return;
      }
      say(problemText(err), "error");
    }
  }

  // line i of the cart: a product's variants are lines of their own, so
  // the line's place, not its product, makes its ids unique.
  function line(l, i) {
    const qtyId = `qty-${i}`;
    const name = lineName(l);
    const qty = h("input", {
      id: qtyId, type: "number", min: "1", max: "99", value: String(l.quantity),
      inputmode: "numeric", required: true, disabled: !l.available,
    });
    const update = (e) => {
      e.preventDefault();
      const n = Number(qty.value);
      if (!Number.isInteger(n) || n < 1 || n > 99) {
        say("Choose a quantity from 1 to 99, or remove the line.", "error");
        qty.focus();
        return;
      }
      if (n === l.quantity) return;
      change("PUT", l, { quantity: n }, `Quantity of ${name} is now ${n}.`);
    };
    const flagged = isShort(l);
    return h("li", {
      class: `line${l.available ? "" : " unavailable"}${flagged ? " short" : ""}`, "data-product": l.productId, "data-sku": l.sku || null,
    },
    h("div", { class: "line-name" },
      h("a", { href: productLink(l) }, l.name),
      l.available ? availabilityBadge(l) : h("span", { class: "badge" }, "No longer available"),
      attributesLine(l),
      shortNote(l)),
    h("span", { class: "line-unit", "data-testid": "unit-price" }, money(l.unitPriceCents)),
    h("form", { class: "line-qty", onsubmit: update },
      h("label", { for: qtyId }, h("span", { class: "visually-hidden" }, `Quantity of ${name}`)),
      qty,
      h("button", {
        type: "submit", class: "secondary", disabled: !l.available, "aria-label": `Update the quantity of ${name}`,
      }, "Update")),
    h("span", { class: "line-total" }, money(l.lineTotalCents)),
    h("button", {
      type: "button", class: "danger", "aria-label": `Remove ${name}`,
      onclick: () => change("DELETE", l, undefined, `Removed ${name}.`),
    }, "Remove"),
    );
  }

  function draw() {
    const items = current.items || [];
    // A sold-out or withdrawn line cannot be bought: it is left out of the
    // subtotal and keeps the shopper from checkout until it is removed,
    // rather than letting the order be refused after pressing.
    const blocked = items.filter(unbuyable);
    const subtotal = items.filter((l) => !unbuyable(l)).reduce((n, l) => n + l.lineTotalCents, 0);
    if (!items.length) {
      put(body, h("p", {}, "Your cart is empty. ", h("a", { href: "#/" }, "Browse the shop"), "."));
      return;
    }
    put(body,
      h("ul", { class: "lines", "aria-label": "Cart lines" }, items.map(line)),
      h("dl", { class: "totals" },
        h("dt", {}, "Items"), h("dd", { "data-testid": "item-count" }, String(current.itemCount)),
        h("dt", {}, "Subtotal"), h("dd", { "data-testid": "subtotal" }, money(subtotal))),
      current.lastUpdated ? h("p", { class: "muted" }, `Last changed ${date(current.lastUpdated)}. `,
        "Prices follow the catalog: a price change reaches this cart through the change feed.") : null,
      blocked.length
        ? h("p", {},
          h("button", { type: "button", disabled: true, "aria-describedby": "checkout-blocked", "data-testid": "to-checkout" },
            "Go to checkout"),
          h("span", { id: "checkout-blocked", class: "buy-reason" }, blockedText(blocked)))
        : h("p", {}, h("a", { class: "button", href: "#/checkout", "data-testid": "to-checkout" }, "Go to checkout")),
    );
  }

  draw();
  put(main, h("h1", {}, "Your cart"), body);
}
