// Payments in the storefront: the test payment methods the checkout
// offers, and the words for a payment's state and a declined card.
//
// The page sends a payment-method token, never a card number: the shop's
// payment provider knows these test tokens (domain/payments TestMethods),
// each with a fixed outcome. TestStorefrontPaymentMethods (web/) reads
// this file as served and fails when its tokens and the domain's differ,
// in content or order, so the select cannot offer a token the provider
// does not know.

import { field, h } from "../ui.js";

// paymentMethods is THE list the checkout offers, in the domain's order;
// the first is the default. declines says the card is refused.
// Keep one entry per line, in this exact shape: the Go test reads it.
export const paymentMethods = [
  { token: "pm_card_visa", label: "Visa", declines: false },
  { token: "pm_card_mastercard", label: "Mastercard", declines: false },
  { token: "pm_card_amex", label: "American Express", declines: false },
  { token: "pm_card_chargeDeclined", label: "Declined card", declines: true },
  { token: "pm_card_chargeDeclinedInsufficientFunds", label: "Insufficient funds", declines: true },
  { token: "pm_card_chargeDeclinedExpiredCard", label: "Expired card", declines: true },
  { token: "pm_card_chargeDeclinedIncorrectCvc", label: "Incorrect security code (CVC)", declines: true },
  { token: "pm_card_chargeDeclinedFraudulent", label: "Card flagged as fraudulent", declines: true },
  { token: "pm_card_chargeDeclinedProcessingError", label: "Processing error", declines: true },
];

// methodField is the labelled select of paymentMethods, grouped by
// outcome so a shopper trying the shop sees which cards are refused.
// The control's id and name are "paymentMethod", the request's field,
// so a 400 on /paymentMethod lands on it.
export function methodField() {
  const option = (m, i) => h("option", { value: m.token, selected: i === 0 }, m.label);
  const group = (label, declines) => h("optgroup", { label },
    paymentMethods.map((m, i) => (m.declines === declines ? option(m, i) : null)));
  const select = h("select", { id: "paymentMethod", name: "paymentMethod", required: true },
    group("Test cards that pay", false), group("Test cards that are declined", true));
  const wrap = field("Payment method", select,
    "Test cards only: the shop is sent a token for the card, never its number.");
  return { select, field: wrap };
}

// codeWords turns a provider's decline code into words:
// "insufficient_funds" → "insufficient funds", "incorrect_cvc" →
// "incorrect CVC".
export function codeWords(code) {
  if (!code) return "no reason given";
  return code.replace(/_/g, " ").replace(/\bcvc\b/i, "CVC");
}

// sentence capitalises text and ends it with a full stop.
export function sentence(text) {
  const t = (text || "").trim();
  if (!t) return "";
  return t.charAt(0).toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".");
}

// declinedText is what the checkout says of a declined card (a 402's
// declineCode, or a rejected order's): nothing was taken, the cart is
// as it was, and another method may be tried.
export function declinedText(code) {
  return `Payment declined (${codeWords(code)}). Nothing was charged and your cart is unchanged: ` +
    "choose another payment method and place the order again.";
}

// The words of each payment status the API reports (Order.payment.status).
const paymentWords = {
  none: "nothing was asked of your card",
  authorized: "the amount is held on your card; it is charged when the order ships",
  captured: "your card was charged",
  voided: "the hold on your card was released; nothing was charged",
  refunded: "the charge was paid back to your card",
  declined: "your card was declined; nothing was charged",
};

export function paymentText(status) {
  return paymentWords[status] || "";
}

// paymentBadge says a payment status in a word; the colour only
// repeats it.
export function paymentBadge(status, prefix = "") {
  return h("span", { class: `badge pay-${status}`, "data-testid": "payment-status" }, `${prefix}${status}`);
}

// listPaymentStatus is the payment status an order's status alone
// settles, for the order history, whose rows carry only the status: an
// order authorized or placed holds an authorization, one shipped or
// delivered was captured. A cancelled, rejected or expired order may
// have been voided, refunded, declined or never charged: only its
// detail (Order.payment) says which, so the row says nothing.
export function listPaymentStatus(status) {
  if (status === "authorized" || status === "placed") return "authorized";
  if (status === "shipped" || status === "delivered") return "captured";
  return null;
}
