package suite

import (
	"strings"
	"testing"
)

// TestNamesAreCosmosIDsAndDistinct: every listed container has its own
// name, a valid Cosmos id, derived from its test and ordinal alone.
func TestNamesAreCosmosIDsAndDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, c := range List() {
		id := c.Def.ID
		if id != Name(c.Test, c.N) {
			t.Errorf("%s #%d is named %s, want %s", c.Test, c.N, id, Name(c.Test, c.N))
		}
		if id == "" || len(id) > 255 || strings.ContainsAny(id, `/\?# `) {
			t.Errorf("%s #%d: %q is not a Cosmos id", c.Test, c.N, id)
		}
		if other, ok := seen[id]; ok {
			t.Errorf("%s #%d and %s share the name %s", c.Test, c.N, other, id)
		}
		seen[id] = c.Test
		if c.Def.PartitionKeyPath != PartitionKeyPath {
			t.Errorf("%s: partition key %s, want %s", id, c.Def.PartitionKeyPath, PartitionKeyPath)
		}
		if def, ok := Lookup(c.Test, c.N); !ok || def.ID != id {
			t.Errorf("Lookup(%s, %d) = %s, %v", c.Test, c.N, def.ID, ok)
		}
	}
	if _, ok := Lookup("Query", 0); ok {
		t.Error("a container numbered 0: ordinals start at 1")
	}
}

// TestListIsACopy: a caller changing what List returns changes nothing
// the next caller gets.
func TestListIsACopy(t *testing.T) {
	a := Containers()
	a[0].IndexingPolicy.IncludedPaths[0] = "/changed"
	a[0].ID = "changed"
	if b := Containers(); b[0].IndexingPolicy.IncludedPaths[0] != "/*" || b[0].ID == "changed" {
		t.Errorf("the list shares its slices with its callers: %+v", b[0])
	}
}
