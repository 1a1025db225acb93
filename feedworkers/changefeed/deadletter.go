package changefeed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// TypeDeadLetter is the discriminator of a dead-letter record in the
// lease container.
const TypeDeadLetter = "deadLetter"

// DeadLetter is a document the handler could not apply after every retry,
// parked so that the feed behind it keeps flowing. An operator reads the
// reason, fixes the cause, and touches the document to replay it.
type DeadLetter struct {
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schemaVersion"`
	Processor     string          `json:"processor"`
	Lease         string          `json:"lease"`
	DocumentID    string          `json:"documentId"`
	Reason        string          `json:"reason"`
	Document      json.RawMessage `json:"document"`
	ParkedAt      time.Time       `json:"parkedAt"`
}

// deadLetterID is "deadletter.<processor>.<docid>.<hash of the version>":
// the same version of the same document parked twice (a batch replayed
// after a crash) lands on the same record, so parking is idempotent.
func deadLetterID(processor, docID string, doc []byte) string {
	sum := sha256.Sum256(doc)
	if len(docID) > 256 {
		docID = docID[:256]
	}
	return "deadletter." + processor + "." + docID + "." + hex.EncodeToString(sum[:6])
}

// park writes the dead-letter record of one document (an upsert keyed by
// the version, in the lease container: the processor's own bookkeeping).
// A document that is not even JSON is parked as a JSON string, under the
// id "unknown".
func (p *Processor) park(ctx context.Context, lease string, doc []byte, reason error) error {
	head, _ := repo.Decode[struct {
		ID string `json:"id"`
	}](doc)
	if head.ID == "" {
		head.ID = "unknown"
	}
	raw := json.RawMessage(doc)
	if !json.Valid(doc) {
		b, _ := json.Marshal(string(doc))
		raw = b
	}
	return p.docs.putDeadLetter(ctx, DeadLetter{
		ID:            deadLetterID(p.cfg.Name, head.ID, doc),
		Type:          TypeDeadLetter,
		SchemaVersion: domain.SchemaVersion,
		Processor:     p.cfg.Name,
		Lease:         lease,
		DocumentID:    head.ID,
		Reason:        reason.Error(),
		Document:      raw,
		ParkedAt:      time.Now().UTC(),
	})
}
