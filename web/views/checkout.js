// Checkout: an address form and a payment method. The server carries the
// order through its workflow (pending → reserved → authorized → placed)
// and answers 201 once it is placed, 202 when it is still in progress
// after about 2 seconds (the page then reads the order until it rests),
// 402 when the card is declined and 409 when a line is out of stock. The
// page sends an Idempotency-Key and keeps it while the same submission is
// retried, so a retry after a lost response replays the first order
// instead of charging twice.

import { ApiError, get, request, user } from "../api.js";
import {
  availabilityBadge, cartCount, field, go, h, lineKey, lineName, lineNames, money, needSignIn, problemText, put, say,
  screenCost, setCartCount, shortages, shortagesText, showCost, showWrite,
} from "../ui.js";
import { blockedText, isShort, loadCart, short, shortNote, unbuyable } from "./cart.js";
import { inProgress } from "./orders.js";
import { declinedText, methodField, sentence } from "./payment.js";

const paymentDeclined = "https://shop.example/problems/payment-declined";

// After a 202 the page reads the order every pollEvery until it rests,
// for at most pollFor: past that the order's own page tells the rest
// (the shop's sweeper finishes or expires the order; the page need not
// wait for it).
const pollEvery = 500;
const pollFor = 10000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// summaryLine is one line of the order summary, flagged when the last
// checkout found too few in stock for it.
function summaryLine(l) {
  return h("li", { "data-product": l.productId, "data-sku": l.sku || null, class: isShort(l) ? "short" : null },
    h("span", { class: "summary-name" }, `${l.quantity} × ${lineName(l)}`, availabilityBadge(l), shortNote(l)),
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

// fieldLabels names every field of the request in an error.
const fieldLabels = { ...labels, paymentMethod: "Payment method" };

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
  // A sold-out line keeps the order from being placed: the button is
  // disabled and says why, instead of a refusal after pressing.
  const blocked = (cart.items || []).filter(unbuyable);
  const total = items.filter((l) => !unbuyable(l)).reduce((n, l) => n + l.lineTotalCents, 0);
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
  const payment = methodField();
  controls.paymentMethod = payment.select;
  const errors = {};
  // Each field's error is an element that is always on the page, named by
  // the field's aria-describedby (after its hint, if any) and announced
  // as it appears (a live region); aria-invalid is set only while the
  // field is in error.
  for (const [k, c] of Object.entries(controls)) {
    errors[k] = h("span", { class: "field-error", id: `${k}-error`, "aria-live": "assertive" });
  }
  const describe = (c, k) => {
    const ids = (c.getAttribute("aria-describedby") || "").split(" ").filter((id) => id && id !== `${k}-error`);
    c.setAttribute("aria-describedby", [...ids, `${k}-error`].join(" "));
  };
  const submit = h("button", {
    type: "submit", disabled: blocked.length > 0, "aria-describedby": blocked.length ? "order-blocked" : null,
  }, `Place order · ${money(total)}`);

  async function place(e) {
    e.preventDefault();
    for (const [k, c] of Object.entries(controls)) {
      errors[k].textContent = "";
      c.removeAttribute("aria-invalid");
    }
    const address = {};
    for (const k of Object.keys(labels)) {
      const v = controls[k].value.trim();
      if (v) address[k] = k === "country" ? v.toUpperCase() : v;
    }
    const body = { shippingAddress: address, paymentMethod: controls.paymentMethod.value };
    submit.disabled = true;
    say("Placing your order…");
    try {
      const res = await request("POST", "/v1/checkout", {
        body,
        headers: { "Idempotency-Key": keyFor(body) },
      });
      let o = res.data;
      if (res.status === 202) {
        showWrite("Checkout started", res.cost);
        say("Your payment is being processed…");
        o = await follow(o, res.location);
        if (!o) return;
      } else {
        showWrite("Placed order", res.cost);
      }
      settle(o);
    } catch (err) {
      submit.disabled = false;
      if (err instanceof ApiError && err.status === 401) return needSignIn();
      if (err.cost) showWrite("Checkout refused", err.cost);
      if (err instanceof ApiError && err.status === 402 && err.problem.type === paymentDeclined) {
        declined(err.problem.declineCode, err.problem.detail);
        return;
      }
      if (err instanceof ApiError && err.status === 400) {
        let first = null;
        for (const [pointer, detail] of Object.entries(err.fieldErrors)) {
          const k = pointer.split("/").pop();
          if (!controls[k]) continue;
          errors[k].textContent = `${fieldLabels[k].replace(" (optional)", "")} ${detail}.`;
          controls[k].setAttribute("aria-invalid", "true");
          first = first || controls[k];
        }
        if (first) first.focus();
      }
      // Out of stock: nothing was reserved and the cart is as it was. The
      // lines concerned are flagged here and on the cart, by the names the
      // cart gave them.
      const missing = shortages(err);
      if (missing.length) flagShort(missing);
      // A network failure or a 5xx keeps the key: pressing the button again
      // retries the same submission, which the server replays at most once.
      if (!err.status || err.status >= 500) {
        say("The order may not have gone through. Press “Place order” again: it is safe, the same order will not be placed twice.", "error");
      } else {
        say(problemText(err, names, fieldLabels), "error");
      }
    }
  }

  // follow reads the order at location (the 202's Location) until it
  // leaves the in-progress statuses or pollFor has passed, and returns it
  // as last read; null when the visitor has left the screen meanwhile.
  // Each read is shown in the cost bar: polling is not free.
  async function follow(o, location) {
    const path = location || `/v1/orders/${encodeURIComponent(o.id)}`;
    const until = Date.now() + pollFor;
    for (let check = 1; inProgress.has(o.status) && Date.now() < until; check++) {
      await sleep(pollEvery);
      if (!form.isConnected) return null;
      try {
        const res = await get(path);
        showCost(`GET ${path} (payment check ${check})`, res.cost);
        o = res.data;
      } catch (err) {
        // A lost answer or a busy shop: the next read may get through.
        if (err.status === 401) throw err;
      }
    }
    return o;
  }

  // settle shows where an order the checkout answered (or the page read
  // after a 202) has come to rest.
  function settle(o) {
    submit.disabled = false;
    if (o.status === "rejected") {
      const r = o.rejection || {};
      if (r.reason === "out_of_stock" && Array.isArray(r.items) && r.items.length) {
        flagShort(r.items);
        say(shortagesText(r.items, names), "error");
      } else {
        declined(r.declineCode, r.message);
      }
      return;
    }
    if (o.status === "expired") {
      say("The payment took too long, so the order was stopped: nothing was charged. Please place it again.", "error");
      return;
    }
    attempt = null;
    const id = encodeURIComponent(o.id);
    if (inProgress.has(o.status)) {
      say(`Your payment is still being processed: here is order ${o.id} as it stands. Reload it in a moment for the outcome.`);
      go(`#/orders/${id}`);
      return;
    }
    short.clear();
    // The paid lines leave the cart: the badge follows without a read.
    const paid = (o.items || []).reduce((n, l) => n + l.quantity, 0);
    if (cartCount() !== null) setCartCount(Math.max(0, cartCount() - paid));
    say(o.status === "placed" ? `Thank you: order ${o.id} is placed.` : `Order ${o.id} is ${o.status}.`, "ok");
    go(`#/orders/${id}`);
  }

  // declined explains a declined card beside the payment method and in
  // the status line, and hands the method back: the cart is untouched.
  function declined(code, detail) {
    errors.paymentMethod.textContent = sentence(detail || "Your card was declined.");
    controls.paymentMethod.setAttribute("aria-invalid", "true");
    say(declinedText(code), "error");
    controls.paymentMethod.focus();
  }

  // flagShort marks the lines the stock could not serve, here and on
  // the cart (short), by the names the cart gave them.
  function flagShort(missing) {
    short.clear();
    for (const s of missing) short.set(lineKey(s.productId, s.sku), s);
    summary.replaceChildren(...items.map(summaryLine));
  }

  const form = h("form", { class: "stack", onsubmit: place, novalidate: true },
    h("h2", {}, "Shipping address"),
    Object.entries(labels).map(([k, label]) => h("div", {},
      field(label, controls[k], k === "country" ? "Two letters, ISO 3166 (DE, FR, US…)" : null),
      errors[k])),
    h("h2", {}, "Payment"),
    h("div", {}, payment.field, errors.paymentMethod),
    submit,
    blocked.length ? h("p", { id: "order-blocked", class: "buy-reason" }, blockedText(blocked), " ",
      h("a", { href: "#/cart" }, "Change the cart")) : null);
  for (const [k, c] of Object.entries(controls)) describe(c, k);

  const names = lineNames(cart.items);
  const summary = h("ul", { class: "summary", "aria-label": "Order lines" }, items.map(summaryLine));

  put(main,
    h("h1", {}, "Checkout"),
    h("section", { "aria-labelledby": "summary-h" },
      h("h2", { id: "summary-h" }, "Your order"),
      summary,
      h("p", { class: "price" }, `Total ${money(total)}`),
      h("p", {}, h("a", { href: "#/cart" }, "Change the cart"))),
    form,
  );
}
