// The shop's sample frontend: a hash router over the shop's screens.
// Each view renders from ONE API call and reports its cost in the
// cost bar, so the modeling rule "one screen, one read" is visible.

import { get, setToken, user } from "./api.js";
import {
  cartBadgeText, cartCount, go, h, navigated, needSignIn, problemText, put, say, screenCost, setCartCount, showCost,
} from "./ui.js";
import { home, category } from "./views/catalog.js";
import { product, reviews } from "./views/product.js";
import { cart } from "./views/cart.js";
import { checkout } from "./views/checkout.js";
import { orders, order } from "./views/orders.js";
import { admin } from "./views/admin.js";
import { webhooks } from "./views/webhooks.js";
import { signin } from "./views/signin.js";
import { account } from "./views/account.js";
import { search } from "./views/search.js";

// routes: pattern → view. A view gets (main, params, query) and returns
// a promise; it sets the page title via its h1.
const routes = [
  [/^\/$/, home],
  [/^\/c\/([^/]+)$/, category],
  [/^\/p\/([^/]+)$/, product],
  [/^\/p\/([^/]+)\/reviews$/, reviews],
  [/^\/cart$/, cart],
  [/^\/checkout$/, checkout],
  [/^\/orders$/, orders],
  [/^\/orders\/([^/]+)$/, order],
  [/^\/admin$/, admin],
  [/^\/admin\/webhooks$/, webhooks],
  [/^\/signin$/, signin],
  [/^\/account$/, account],
  [/^\/search$/, search],
];

// parse splits "#/p/42?x=1" into path "/p/42" and its query parameters.
function parse(hash) {
  const raw = hash.replace(/^#/, "") || "/";
  const [path, qs] = raw.split("?");
  return { path, query: new URLSearchParams(qs || "") };
}

// renderNav draws the header's links; the cart's badge is the item count
// of the last cart response (setCartCount), so it costs no read.
function renderNav() {
  const u = user();
  const items = [
    h("li", {}, h("a", { href: "#/cart", class: "cart-link" }, "Cart",
      h("span", { id: "cart-count", class: "count", "data-testid": "cart-count" }, cartBadgeText(cartCount())))),
    h("li", {}, h("a", { href: "#/orders" }, "Orders")),
  ];
  if (u && u.admin) items.push(h("li", {}, h("a", { href: "#/admin" }, "Admin")));
  if (u) {
    items.push(h("li", {}, h("a", { href: "#/account", title: `Signed in as ${u.name}` }, "Account",
      h("span", { class: "user" }, ` (${u.name})`))));
    items.push(h("li", {},
      h("button", {
        type: "button", class: "link", onclick: () => {
          setCartCount(null);
          setToken(null);
          say("Signed out.", "ok");
          go("#/");
        },
      }, "Sign out")));
  } else {
    items.push(h("li", {}, h("a", { href: "#/signin" }, "Sign in")));
  }
  const current = location.hash.split("?")[0] || "#/";
  for (const li of items) {
    const a = li.querySelector("a");
    if (a && a.getAttribute("href") === current) a.setAttribute("aria-current", "page");
  }
  document.getElementById("nav").replaceChildren(...items);
}

// failed is the screen of a view whose read failed: what happened in
// words, and the request in the cost bar.
function failed(screen, err) {
  put(screen,
    h("h1", {}, err.status === 404 ? "Not found" : "Something went wrong"),
    h("p", {}, problemText(err)),
    h("p", {}, h("a", { href: "#/" }, "Back to the shop")),
  );
  const request = err.request || "Request";
  screenCost(screen, err.status ? `${request} (${err.status})` : `${request} (no answer)`, err.cost || null);
}

// The header's search box routes to the results screen (#/search?q=…),
// whose address is the query, so a search can be linked and reloaded.
const searchForm = document.getElementById("search");
const searchInput = document.getElementById("search-q");
searchForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const q = searchInput.value.trim();
  if (!q) {
    searchInput.focus();
    return;
  }
  go(`#/search?${new URLSearchParams({ q })}`);
});

let renderCount = 0;
let searchShown = "";

async function render() {
  const { path, query } = parse(location.hash);
  const main = document.getElementById("main");
  const mine = ++renderCount;
  navigated();
  renderNav();
  // The box shows the words of the results on screen, and is empty
  // elsewhere; but never over what a visitor is typing (the box has focus
  // and holds something other than what the router last put there), as
  // when they type while the page is still loading.
  const words = path === "/search" ? query.get("q") || "" : "";
  if (document.activeElement !== searchInput || searchInput.value === searchShown) searchInput.value = words;
  searchShown = words;
  const match = routes.map(([re, view]) => [re.exec(path), view]).find(([m]) => m);
  if (!match) {
    main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the shop")));
    showCost("No request", null);
    return;
  }
  const [m, view] = match;
  // Each view renders into its own element, swapped in only if no newer
  // navigation started meanwhile: a slow response never paints over the
  // screen the visitor has moved on to.
  const screen = h("div", { class: "screen" });
  main.setAttribute("aria-busy", "true");
  try {
    await view(screen, m.slice(1).map(decodeURIComponent), query);
  } catch (err) {
    if (mine !== renderCount) return;
    if (err.status === 401) {
      needSignIn();
      return;
    }
    failed(screen, err);
  }
  if (mine !== renderCount) return;
  main.replaceChildren(screen);
  main.removeAttribute("aria-busy");
  showCost(screen.costLabel || "No request", screen.cost || null);
  // Move focus to the new screen's heading so keyboard and screen-reader
  // users land on the content, as they would after a page load.
  const h1 = main.querySelector("h1");
  if (h1) {
    document.title = `${h1.textContent} · Shop`;
    h1.setAttribute("tabindex", "-1");
    if (renderCount > 1) h1.focus();
  }
}

window.addEventListener("hashchange", () => {
  if (location.hash === "" || location.hash.startsWith("#/")) render();

// A new tab has no cart count yet: read the cart once for the badge of a
// signed-in visitor (the screen's own read and cost bar are untouched).
if (user() && cartCount() === null) {
  get("/v1/cart").then(({ data }) => setCartCount(data.itemCount), () => {});
}
});

document.getElementById("skip").addEventListener("click", (e) => {
  e.preventDefault();
  document.getElementById("main").focus();
});

render();

// A new tab has no cart count yet: read the cart once for the badge of a
// signed-in visitor (the screen's own read and cost bar are untouched).
if (user() && cartCount() === null) {
  get("/v1/cart").then(({ data }) => setCartCount(data.itemCount), () => {});
}
