// Order history (a single-partition query on orders, pk = the user) and
// order detail (a point read). Order lines are a snapshot of the price paid:
// a later price change never touches them. The detail shows the order's
// payment, its history (every move of the checkout workflow, with its
// time) and why a rejected order was refused.

import { get, query, request, user } from "../api.js";
import {
  attributesLine, date, go, h, lineKey, lineNames, money, needSignIn, pager, problemText, productLink, put, say, screenCost,
  shortageText, showCost, showWrite,
} from "../ui.js";
import { codeWords, listPaymentStatus, paymentBadge, paymentText, sentence } from "./payment.js";

function statusBadge(status) {
  return h("span", { class: `badge status-${status}` }, status);
}

function orderRow(o) {
  const paid = listPaymentStatus(o.status);
  return h("li", { class: "order-row" },
    h("div", { class: "order-main" },
      h("a", { href: `#/orders/${encodeURIComponent(o.id)}` }, `Order of ${date(o.createdAt)}`),
      h("small", { class: "muted order-id" }, o.id)),
    h("span", {}, `${o.itemCount} item${o.itemCount === 1 ? "" : "s"}`),
    h("span", { class: "price" }, money(o.totalCents)),
    h("span", { class: "badges" }, statusBadge(o.status), paid ? paymentBadge(paid, "payment ") : null));
}

// inProgress holds the statuses the checkout is still moving an order
// through (the API's 202 answers one of them).
export const inProgress = new Set(["pending", "reserved", "authorized"]);

// stamp is a move's time to the second: the checkout's moves come within
// moments of each other.
function stamp(iso) {
  return h("time", { datetime: iso },
    new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }));
}

// historyTable lists the order's moves, oldest first, after its creation
// (every order starts pending).
function historyTable(o) {
  const row = (from, to, at) => h("tr", {},
    h("td", {}, stamp(at)), h("td", {}, from), h("td", {}, statusBadge(to)));
  return h("section", { "aria-labelledby": "history-h" },
    h("h2", { id: "history-h" }, "History"),
    h("div", { class: "scroll" }, h("table", { class: "history", "data-testid": "history" },
      h("caption", { class: "visually-hidden" }, "Every change of the order's status, oldest first"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "When"), h("th", { scope: "col" }, "From"), h("th", { scope: "col" }, "To"))),
      h("tbody", {}, row("new order", "pending", o.createdAt),
        (o.history || []).map((m) => row(m.from, m.to, m.at))))));
}

// rejectionText says why a rejected order was refused, naming the short
// lines by the names on the order.
function rejectionText(o) {
  const r = o.rejection;
  if (r.reason === "card_declined") {
    return `the card was declined (${codeWords(r.declineCode)}). ${sentence(r.message)}`.trim();
  }
  if (r.reason === "out_of_stock") {
    const names = lineNames(o.items);
    const lines = (r.items || []).map((s) => shortageText(s, names[lineKey(s.productId, s.sku)]));
    return `not enough in stock${lines.length ? `: ${lines.join("; ")}` : ""}.`;
  }
  return `${r.reason.replace(/_/g, " ")}.`;
}

// paymentLine says the order's payment status in a word and a phrase;
// orders from before payments have none.
function paymentLine(o) {
  const p = o.payment;
  if (!p) return null;
  return h("p", { class: "payment" }, "Payment: ", paymentBadge(p.status),
    ` · ${money(p.amountCents, (p.currency || "usd").toUpperCase())}: ${paymentText(p.status)}.`);
}

// The cancel button's words for each status it is offered in: a placed
// order's authorization is voided, a shipped order's capture refunded.
const cancelling = {
  placed: { label: "Cancel this order", done: "Your order is cancelled. The hold on your card is released." },
  shipped: { label: "Cancel and refund this order", done: "Your order is cancelled and your payment refunded." },
};

export async function orders(main) {
  if (!user()) return needSignIn();
  const { data, cost } = await get("/v1/orders" + query({ limit: 20 }));
  screenCost(main, "GET /v1/orders", cost);
  const list = h("ul", { class: "orders", "aria-label": "Your orders" }, data.items.map(orderRow));
  const more = pager({
    continuation: data.continuation,
    label: "Show older orders",
    next: (continuation) => get("/v1/orders" + query({ limit: 20, continuation })),
    onPage: (page) => {
      showCost("GET /v1/orders (next page)", page.cost);
      list.append(...page.data.items.map(orderRow));
    },
  });

  put(main,
    h("h1", {}, "Your orders"),
    data.items.length ? list : h("p", {}, "No orders yet. ", h("a", { href: "#/" }, "Start shopping"), "."),
    more,
  );
}

export async function order(main, [id]) {
  if (!user()) return needSignIn();
  const path = `/v1/orders/${encodeURIComponent(id)}`;
  const { data: o, cost } = await get(path);
  screenCost(main, `GET ${path}`, cost);
  const a = o.shippingAddress || {};

  const how = cancelling[o.status];
  // Cancelling cannot be undone, so the first press only asks: the button
  // gives way to a question with "Yes, cancel" and "Keep the order", and
  // focus moves to the question so it is read out.
  const cancelBox = h("div", { class: "cancel-box" });
  async function doCancel(yes) {
    yes.disabled = true;
    try {
      // The order and the customer summary change in one transactional
      // batch in the user's partition; the workflow then voids the
      // authorization (placed) or refunds the capture (shipped).
      const res = await request("POST", `${path}/cancel`);
      showWrite("Cancelled order", res.cost);
      say(how.done, "ok");
      go(`#/orders/${encodeURIComponent(id)}`);
    } catch (err) {
      yes.disabled = false;
      say(problemText(err), "error");
    }
  }
  function ask() {
    const question = h("p", { id: "cancel-q", tabindex: "-1" },
      o.status === "shipped"
        ? "Cancel this order and refund your payment? This cannot be undone."
        : "Cancel this order? This cannot be undone.");
    const yes = h("button", {
      type: "button", class: "danger", "data-testid": "confirm-cancel", "aria-describedby": "cancel-q",
      onclick: () => doCancel(yes),
    }, "Yes, cancel");
    const keep = h("button", { type: "button", class: "secondary", onclick: offer }, "Keep the order");
    cancelBox.replaceChildren(question, h("p", { class: "actions" }, yes, " ", keep));
    question.focus();
  }
  function offer(e) {
    const first = h("button", { type: "button", class: "danger", onclick: ask }, how.label);
    cancelBox.replaceChildren(first);
    if (e) first.focus();
  }
  if (how) offer();
  const cancel = how ? cancelBox : null;

  // put, not replaceChildren: the customer line and the cancel button
  // are null for some orders, and replaceChildren prints null as text.
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/orders" }, "Your orders")),
    h("h1", {}, "Order details"),
    h("p", { class: "muted order-id" }, `Order number ${o.id}`),
    h("p", {}, "Status: ", statusBadge(o.status), ` · ordered ${date(o.createdAt)}`),
    inProgress.has(o.status)
      ? h("p", {}, "Your payment is being processed: reload this page in a moment for the outcome.") : null,
    o.rejection ? h("p", { class: "rejection", "data-testid": "rejection" }, `Refused: ${rejectionText(o)}`) : null,
    paymentLine(o),
    h("table", { class: "order-lines" },
      h("caption", { class: "visually-hidden" }, "What you paid for each product"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Product"), h("th", { scope: "col" }, "Price paid"),
        h("th", { scope: "col" }, "Qty"), h("th", { scope: "col" }, "Total"))),
      h("tbody", {}, (o.items || []).map((l) => h("tr", {},
        h("td", {}, h("a", { href: productLink(l) }, l.name), attributesLine(l)),
        h("td", {}, money(l.unitPriceCents)),
        h("td", {}, String(l.quantity)),
        h("td", {}, money(l.lineTotalCents))))),
      h("tfoot", {}, h("tr", {},
        h("th", { scope: "row", colspan: "3" }, "Total"),
        h("td", { "data-testid": "order-total" }, money(o.totalCents))))),
    h("section", { "aria-labelledby": "ship-h" },
      h("h2", { id: "ship-h" }, "Shipping to"),
      h("address", {}, [a.name, a.line1, a.line2, `${a.postalCode || ""} ${a.city || ""}`.trim(), a.country]
        .filter(Boolean).flatMap((s) => [s, h("br")]))),
    o.customer ? h("p", { class: "muted" }, `Ordered by ${o.customer.name} <${o.customer.email}>`) : null,
    historyTable(o),
    cancel,
  );
}
