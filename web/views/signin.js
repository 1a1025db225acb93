// Sign-in through the dev token endpoint (dev mode only): the server signs
// a token for whoever asks. A real deployment puts an identity provider here.

import { request, setToken, user } from "../api.js";
import { field, go, h, problemText, put, say, screenCost, setCartCount } from "../ui.js";

// reasons say why a screen sent the visitor here (needSignIn's why).
const reasons = {
  cart: "Sign in to add this to your cart: you will come back to the product, and it will be in your cart.",
  review: "Sign in to write a review.",
  "": "Sign in to see your cart, your orders and your account.",
};

export async function signin(main, _params, params) {
  const next = params.get("next");
  const safeNext = next && next.startsWith("#/") && !next.startsWith("#/signin") ? next : "#/";
  const reason = reasons[params.get("why") || ""] || reasons[""];
  const u = user();
  const userId = h("input", {
    id: "userId", type: "text", required: true, maxlength: "64", autocomplete: "username",
    pattern: "[A-Za-z0-9_\\-]+", value: u ? u.id : "",
  });
  const name = h("input", { id: "name", type: "text", required: true, maxlength: "200", autocomplete: "name", value: u ? u.name : "" });
  const email = h("input", { id: "email", type: "email", required: true, maxlength: "254", autocomplete: "email", value: u ? u.email : "" });
  // Never ticked in advance: whoever signs in next asks for the role
  // themselves, or does not get it.
  const admin = h("input", { id: "admin", type: "checkbox" });
  const submit = h("button", { type: "submit" }, "Sign in");

  async function send(e) {
    e.preventDefault();
    submit.disabled = true;
    try {
      const res = await request("POST", "/v1/dev/token", {
        body: { userId: userId.value.trim(), name: name.value.trim(), email: email.value.trim(), admin: admin.checked },
      });
      setToken(res.data.token);
      // Another user's cart count is not this one's.
      setCartCount(null);
      say(`Signed in as ${name.value.trim()}.`, "ok");
      go(safeNext);
    } catch (err) {
      submit.disabled = false;
      say(err.status === 404 ? "Dev sign-in is switched off on this server." : problemText(err, {}, { userId: "User id" }), "error");
    }
  }

  screenCost(main, "No store read on this screen", null);
  put(main,
    h("h1", {}, "Sign in"),
    h("p", { class: "reason", "data-testid": "signin-reason" }, reason),
    h("p", { class: "muted" }, "A development sign-in: pick any user id. Your cart and orders live in the partition of that id."),
    h("form", { class: "stack", onsubmit: send },
      field("User id", userId, "Letters, digits, - and _"),
      field("Name", name),
      field("Email", email),
      h("div", { class: "check" }, admin, h("label", { for: "admin" }, "Administrator (can change prices and stock)")),
      submit),
  );
}
