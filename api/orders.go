package api

import (
	"net/http"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// handleSummary is the account screen: ONE point read of the user's
// pre-computed customerSummary (model-denormalize-reads: pre-computed
// aggregates), not a query over their orders.
func handleSummary(orders *repo.Orders, rs *renders) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, err := orders.ReadSummary(r.Context(), userFrom(r.Context()).ID)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		writeDoc(w, r, rs, "summary", doc, viewSummary)
	}
}

// handleOrders is the order history: ONE single-partition query in orders
// (pk = the token's sub), newest first, projected to what the list shows.
func handleOrders(orders *repo.Orders, rs *renders) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		limit, cont, err := pageParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		page, err := orders.Page(r.Context(), userFrom(r.Context()).ID, limit, cont)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		writePage(w, r, rs, "orderListItem", page, viewOrderListItem)
	}
}

// handleOrder is the order detail: ONE point read by (the token's sub,
// orderId). Another user's order id is not in the caller's partition, so
// it is a 404, never a 403 that would confirm it exists.
func handleOrder(orders *repo.Orders, rs *renders) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "orderId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		doc, etag, err := orders.Read(r.Context(), userFrom(r.Context()).ID, id)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		body, ok, err := renderShown(rs, "order", doc, repo.IsOrder, viewOrder)
		switch {
		case err != nil:
			writeProblem(w, r, err)
		case !ok:
			writeProblem(w, r, domain.Errorf(domain.ENOTFOUND, "order %q not found", id))
		default:
			setETag(w, etag)
			writeRendered(w, body)
		}
	}
}

// handleOrderCancel lets the owner cancel a placed order: the order and
// the customerSummary change in ONE transactional batch, If-Match on both.
func handleOrderCancel(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "orderId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		o, err := ws.SetOrderStatus(r.Context(), userFrom(r.Context()).ID, id, ifMatch(r), domain.StatusCancelled)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, o.ETag)
		encode(w, http.StatusOK, viewOrder(o))
	}
}

type orderStatusRequest struct {
	Status string `json:"status" validate:"required,orderstatus"`
}

// handleAdminOrderPatch moves any user's order along the status machine;
// the admin names the partition (userId) explicitly, a point operation.
func handleAdminOrderPatch(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		userID, err := pathID(r, "userId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		id, err := pathID(r, "orderId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[orderStatusRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		o, err := ws.SetOrderStatus(r.Context(), userID, id, ifMatch(r), req.Status)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, o.ETag)
		encode(w, http.StatusOK, viewOrder(o))
	}
}

// handleFeeds reports how far behind each change-feed processor is, and
// its leases: one point read per lease another instance holds
// (Workers.FeedStatus).
func handleFeeds(feeds FeedStatus) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if feeds == nil {
			writeProblem(w, r, domain.Errorf(domain.EUNAVAILABLE, "the feed workers are not running in this process"))
			return
		}
		processors, err := feeds.FeedStatus(r.Context())
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		encode(w, http.StatusOK, viewFeeds(processors, feeds.FanoutStats()))
	}
}
