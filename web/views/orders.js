// Order history (a single-partition query on orders, pk = the user) and
// order detail (a point read). Order lines are a snapshot of the price paid:
// a later price change never touches them.

import { get, query, request, user } from "../api.js";
import { date, go, h, money, needSignIn, pager, problemText, put, say, screenCost, showCost, showWrite } from "../ui.js";

function statusBadge(status) {
  return h("span", { class: `badge status-${status}` }, status);
}

function orderRow(o) {
  return h("li", { class: "order-row" },
    h("div", { class: "order-main" },
      h("a", { href: `#/orders/${encodeURIComponent(o.id)}` }, `Order of ${date(o.createdAt)}`),
      h("small", { class: "muted order-id" }, o.id)),
    h("span", {}, `${o.itemCount} item${o.itemCount === 1 ? "" : "s"}`),
    h("span", { class: "price" }, money(o.totalCents)),
    statusBadge(o.status));
}

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

  const cancel = o.status === "placed" ? h("button", {
    type: "button", class: "danger", onclick: async (e) => {
      e.target.disabled = true;
      try {
        // The order and the customer summary change in one transactional
        // batch in the user's partition.
        const res = await request("POST", `${path}/cancel`);
        showWrite("Cancelled order", res.cost);
        say("Your order is cancelled.", "ok");
        go(`#/orders/${encodeURIComponent(id)}`);
      } catch (err) {
        e.target.disabled = false;
        say(problemText(err), "error");
      }
    },
  }, "Cancel this order") : null;

  // put, not replaceChildren: the customer line and the cancel button
  // are null for some orders, and replaceChildren prints null as text.
  put(main,
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/orders" }, "Your orders")),
    h("h1", {}, "Order details"),
    h("p", { class: "muted order-id" }, `Order number ${o.id}`),
    h("p", {}, "Status: ", statusBadge(o.status), ` · placed ${date(o.createdAt)}`),
    h("table", { class: "order-lines" },
      h("caption", { class: "visually-hidden" }, "What you paid for each product"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Product"), h("th", { scope: "col" }, "Price paid"),
        h("th", { scope: "col" }, "Qty"), h("th", { scope: "col" }, "Total"))),
      h("tbody", {}, (o.items || []).map((l) => h("tr", {},
        h("td", {}, h("a", { href: `#/p/${encodeURIComponent(l.productId)}` }, l.name)),
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
    cancel,
  );
}
