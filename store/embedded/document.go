package embedded

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// validateID applies the port's id rule (domain.ValidateID), the same
// in both adapters.
func validateID(id string) error { return domain.ValidateID("id", id) }

// validatePK: every item operation names its partition key (a Cosmos rule:
// without it a point operation cannot be routed).
func validatePK(pk string) error {
	if pk == "" {
		return domain.Errorf(domain.EINVALID, "partition key is empty")
	}
	if len(pk) > store.MaxPartitionKey {
		return domain.Errorf(domain.EINVALID, "partition key is %d bytes, more than %d", len(pk), store.MaxPartitionKey)
	}
	return nil
}

// splitPath turns a JSON pointer ("/items/0/name") into its unescaped
// segments; "" is the whole document.
func splitPath(path string) []string {
	if path == "" || path[0] != '/' {
		return nil
	}
	parts := strings.Split(path[1:], "/")
	for i, p := range parts {
		if strings.Contains(p, "~") {
			parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
		}
	}
	return parts
}

// decodeDoc parses an item: it must be a JSON object. Numbers stay
// json.Number so that writing the document back keeps them exact.
func decodeDoc(item []byte) (map[string]any, error) {
	if len(item) > store.MaxItemBytes {
		return nil, tooLarge(len(item))
	}
	d := json.NewDecoder(bytes.NewReader(item))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, domain.Errorf(domain.EINVALID, "item is not a JSON object")
	}
	if d.More() {
		return nil, domain.Errorf(domain.EINVALID, "item has data after its JSON object")
	}
	return m, nil
}

func tooLarge(n int) error {
	return domain.Errorf(domain.ETOOLARGE, "item is %d bytes, more than the %d byte limit", n, store.MaxItemBytes)
}

// checkDoc validates a document for partition pk and returns its id and
// its own ttl (noTTL when it has none).
func (st *containerState) checkDoc(m map[string]any, pk string) (string, int64, error) {
	id, ok := m["id"].(string)
	if !ok {
		return "", 0, domain.Errorf(domain.EINVALID, "item has no string id")
	}
	if err := validateID(id); err != nil {
		return "", 0, err
	}
	got, ok := lookup(m, st.pkPath)
	if !ok {
		return "", 0, domain.Errorf(domain.EINVALID, "item %s has no partition key property %s", id, st.def.PartitionKeyPath)
	}
	if s, isString := got.(string); !isString || s != pk {
		return "", 0, domain.Errorf(domain.EINVALID,
			"item %s has %s = %v, not the partition key %q of the call", id, st.def.PartitionKeyPath, got, pk)
	}
	ttl := int64(noTTL)
	if v, ok := m["ttl"]; ok && v != nil {
		n, isNum := v.(json.Number)
		t, err := strconv.ParseInt(string(n), 10, 64)
		if !isNum || err != nil || (t != -1 && t <= 0) {
			return "", 0, domain.Errorf(domain.EINVALID, "item %s: ttl must be -1 or a positive number of seconds, got %v", id, v)
		}
		ttl = t
	}
	return id, ttl, nil
}

// lookup follows a path of property names through nested objects.
func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// encodeDoc sets the system properties, replacing whatever the writer sent
// (Cosmos owns _etag and _ts), and encodes the document as stored.
func encodeDoc(m map[string]any, etag string, ts int64) ([]byte, error) {
	m["_etag"] = etag
	m["_ts"] = json.Number(strconv.FormatInt(ts, 10))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, domain.Errorf(domain.EINVALID, "item cannot be encoded: %v", err)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(out) > store.MaxItemBytes {
		return nil, tooLarge(len(out))
	}
	return out, nil
}
