// Checkout: an address form. The order, its idempotency record and the
// customer summary are written by the server in ONE transactional batch in
// the user's orders partition. The page sends an Idempotency-Key and keeps
// it while the same submission is retried, so a retry after a lost response
// replays the first order instead of charging twice.

import { ApiError, request, user } from "../api.js";
import {
  availabilityBadge, cartCount, field, go, h, money, needSignIn, problemText, put, say, screenCost, setCartCount, shortages,
  showWrite,
} from "../ui.js";
import { loadCart, short, shortNote } from "./cart.js";

// summaryLine is one line of the order summary, flagged when the last
// checkout found too few in stock for it.
function summaryLine(l) {
  return h("li", { "data-product": l.productId, class: short.has(l.productId) ? "short" : null },
    h("span", { class: "summary-name" }, `${l.quantity} × ${l.name}`, availabilityBadge(l), shortNote(l)),
    h("span", {}, money(l.lineTotalCents)));
}

// attempt pairs a key with the exact body it was first sent with: the same
// key with a different body is a 422, so an edited form gets a new key.
let attempt = null;

function keyFor(body) {
  const text = JSON.stringify(body);
  if (!attempt || attempt.body !== text) attempt = { key: newKey(), body: text };
  return attempt.key;
}

// newKey is a random UUID. crypto.randomUUID exists only in secure
// contexts (https, localhost); a shop opened at http://<lan-address> gets
// the same from crypto.getRandomValues.
function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// The labels of the address form, also used to name a field in an error.
const labels = {
  name: "Full name", line1: "Address line 1", line2: "Address line 2 (optional)",
  city: "City", postalCode: "Postal code", country: "Country code",
};

// countryOf is the default shipping country for the cart's currency: the
// sample shop sells in US dollars, so it ships to the US unless told.
const countries = { USD: "US", EUR: "DE", GBP: "GB", CAD: "CA", AUD: "AU", JPY: "JP", CHF: "CH" };

function countryOf(currency) {
  return countries[currency] || "";
}

function input(id, autocomplete, extra = {}) {
  return h("input", { id, name: id, type: "text", autocomplete, ...extra });
}

export async function checkout(main) {
  if (!user()) return needSignIn();
  const { cart, cost } = await loadCart();
  screenCost(main, "GET /v1/cart", cost);
  const items = (cart.items || []).filter((l) => l.available);
  if (!items.length) {
    put(main, h("h1", {}, "Checkout"),
      h("p", {}, "Your cart is empty. ", h("a", { href: "#/" }, "Browse the shop"), "."));
    return;
  }

  const u = user();
  const controls = {
    name: input("name", "name", { required: true, maxlength: "200", value: u.name }),
    line1: input("line1", "address-line1", { required: true, maxlength: "200" }),
    line2: input("line2", "address-line2", { maxlength: "200" }),
    city: input("city", "address-level2", { required: true, maxlength: "100" }),
    postalCode: input("postalCode", "postal-code", { required: true, maxlength: "20" }),
    country: input("country", "country", {
      required: true, maxlength: "2", pattern: "[A-Za-z]{2}", value: countryOf(cart.currency || "USD"), class: "short",
    }),
  };
  const errors = {};
  for (const [k, c] of Object.entries(controls)) {
    errors[k] = h("span", { class: "field-error", id: `${k}-error` });
    c.setAttribute("aria-errormessage", `${k}-error`);
  }
  const submit = h("button", { type: "submit" }, `Place order · ${money(cart.subtotalCents)}`);

  async function place(e) {
    e.preventDefault();
    for (const [k, c] of Object.entries(controls)) {
      errors[k].textContent = "";
      c.removeAttribute("aria-invalid");
    }
    const address = {};
    for (const [k, c] of Object.entries(controls)) {
      const v = c.value.trim();
      if (v) address[k] = k === "country" ? v.toUpperCase() : v;
    }
    const body = { shippingAddress: address };
    submit.disabled = true;
    say("Placing your order…");
    try {
      const res = await request("POST", "/v1/checkout", {
        body,
        headers: { "Idempotency-Key": keyFor(body) },
      });
      attempt = null;
      short.clear();
      showWrite("Placed order", res.cost);
      // The paid lines leave the cart: the badge follows without a read.
      const paid = (res.data.items || []).reduce((n, l) => n + l.quantity, 0);
      if (cartCount() !== null) setCartCount(Math.max(0, cartCount() - paid));
      say(`Thank you: order ${res.data.id} is placed.`, "ok");
      go(`#/orders/${encodeURIComponent(res.data.id)}`);
    } catch (err) {
      submit.disabled = false;
      if (err instanceof ApiError && err.status === 401) return needSignIn();
      if (err.cost) showWrite("Checkout refused", err.cost);
      if (err instanceof ApiError && err.status === 400) {
        let first = null;
        for (const [pointer, detail] of Object.entries(err.fieldErrors)) {
          const k = pointer.split("/").pop();
          if (!controls[k]) continue;
          errors[k].textContent = `${labels[k].replace(" (optional)", "")} ${detail}.`;
          controls[k].setAttribute("aria-invalid", "true");
          first = first || controls[k];
        }
        if (first) first.focus();
      }
      // Out of stock: nothing was reserved and the cart is as it was. The
      // lines concerned are flagged here and on the cart, by the names the
      // cart gave them.
      const missing = shortages(err);
      if (missing.length) {
        short.clear();
        for (const s of missing) short.set(s.productId, s);
        summary.replaceChildren(...items.map(summaryLine));
      }
      // A network failure or a 5xx keeps the key: pressing the button again
      // retries the same submission, which the server replays at most once.
      if (!err.status || err.status >= 500) {
        say("The order may not have gone through. Press “Place order” again: it is safe, the same order will not be placed twice.", "error");
      } else {
        say(problemText(err, names, labels), "error");
      }
    }
  }

  const names = Object.fromEntries((cart.items || []).map((l) => [l.productId, l.name]));
  const summary = h("ul", { class: "summary", "aria-label": "Order lines" }, items.map(summaryLine));

  put(main,
    h("h1", {}, "Checkout"),
    h("section", { "aria-labelledby": "summary-h" },
      h("h2", { id: "summary-h" }, "Your order"),
      summary,
      h("p", { class: "price" }, `Total ${money(cart.subtotalCents)}`),
      h("p", {}, h("a", { href: "#/cart" }, "Change the cart"))),
    h("form", { class: "stack", onsubmit: place, novalidate: true },
      h("h2", {}, "Shipping address"),
      Object.entries(labels).map(([k, label]) => h("div", {},
        field(label, controls[k], k === "country" ? "Two letters, ISO 3166 (DE, FR, US…)" : null),
        errors[k])),
      submit),
  );
}
