package cosmos

import (
	"bytes"
	"encoding/json"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// internalProperties are system properties Cosmos adds that mean nothing
// outside it (resource ids, self links, the change feed's log sequence
// number). They are dropped so a document reads the same on both
// adapters: only _etag and _ts are part of the port.
var internalProperties = []string{"_rid", "_self", "_attachments", "_lsn"}

// fromCosmos converts an item as Cosmos returned it into the port's form:
// the internal system properties removed, and _etag set to etag when the
// body lacks it (the response's ETag header is the authority).
func fromCosmos(body []byte, etag azcore.ETag) ([]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, domain.Errorf(domain.EINTERNAL, "cosmos returned an item that is not a JSON object: %v", err)
	}
	for _, p := range internalProperties {
		delete(doc, p)
	}
	if _, ok := doc["_etag"]; !ok && etag != "" {
		b, err := json.Marshal(string(etag))
		if err != nil {
			return nil, domain.Errorf(domain.EINTERNAL, "encode _etag: %v", err)
		}
		doc["_etag"] = b
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, domain.Errorf(domain.EINTERNAL, "encode item: %v", err)
	}
	return out, nil
}

// etagOf returns the _etag of a converted item, for batch results whose
// ETag field is empty.
func etagOf(item []byte) string {
	var meta struct {
		ETag string `json:"_etag"`
	}
	if json.Unmarshal(item, &meta) != nil {
		return ""
	}
	return meta.ETag
}

// checkItem validates an item before it is sent: a JSON object of at most
// store.MaxItemBytes with a valid string id. It returns the id. Cosmos
// would refuse most of these too, but later, charged, and with less
// helpful messages.
func checkItem(item []byte) (string, error) {
	if len(item) > store.MaxItemBytes {
		return "", domain.Errorf(domain.ETOOLARGE, "the item is %d bytes, over the 2 MB limit", len(item))
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(item, &doc); err != nil || doc == nil {
		return "", domain.Errorf(domain.EINVALID, "the item is not a JSON object")
	}
	var id string
	if err := json.Unmarshal(doc["id"], &id); err != nil {
		return "", domain.Errorf(domain.EINVALID, "the item has no string id")
	}
	return id, checkID(id)
}

// checkID applies the port's id rule (domain.ValidateID), the same in
// both adapters; an id with " or a control character would make azcosmos
// write a malformed batch body.
func checkID(id string) error { return domain.ValidateID("id", id) }

// checkPK requires a partition key value on every call, as the port does.
func checkPK(pk string) error {
	switch {
	case pk == "":
		return domain.Errorf(domain.EINVALID, "empty partition key")
	case len(pk) > store.MaxPartitionKey:
		return domain.Errorf(domain.EINVALID, "partition key longer than %d bytes", store.MaxPartitionKey)
	}
	return nil
}
