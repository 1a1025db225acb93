package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestThroughputSetting(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want int
		ok   bool
	}{
		{"UnlimitedByDefault", nil, 0, true},
		{"Set", []string{"SHOP_THROUGHPUT=400"}, 400, true},
		{"TenThousandPerPartition", []string{"SHOP_THROUGHPUT=40000"}, 40000, true},
		{"MoreThanAPartitionServes", []string{"SHOP_THROUGHPUT=40001"}, 0, false},
		{"MorePartitionsServeMore", []string{"SHOP_THROUGHPUT=50000", "SHOP_PARTITIONS=5"}, 50000, true},
		{"Negative", []string{"SHOP_THROUGHPUT=-1"}, 0, false},
		{"NotANumber", []string{"SHOP_THROUGHPUT=lots"}, 0, false},
		{"NotOnCosmos", []string{"SHOP_THROUGHPUT=400", "COSMOS_ENDPOINT=https://example.documents.azure.com"}, 0, false},
		{"ZeroOnCosmos", []string{"SHOP_THROUGHPUT=0", "COSMOS_ENDPOINT=https://example.documents.azure.com"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig("serve", nil, envOf(tt.env...), io.Discard)
			if (err == nil) != tt.ok || (tt.ok && c.Throughput != tt.want) {
				t.Errorf("throughput %d, err %v; want %d, ok %v", c.Throughput, err, tt.want, tt.ok)
			}
		})
	}
}

func TestThroughputInventorySetting(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want int
		ok   bool
	}{
		{"FollowsByDefault", nil, 0, true},
		{"Set", []string{"SHOP_THROUGHPUT_INVENTORY=16000", "SHOP_PARTITIONS=16"}, 16000, true},
		{"BesideTheOthers", []string{"SHOP_THROUGHPUT=400", "SHOP_THROUGHPUT_INVENTORY=4000"}, 4000, true},
		{"MoreThanAPartitionServes", []string{"SHOP_THROUGHPUT_INVENTORY=40001"}, 0, false},
		{"Negative", []string{"SHOP_THROUGHPUT_INVENTORY=-1"}, 0, false},
		{"NotANumber", []string{"SHOP_THROUGHPUT_INVENTORY=lots"}, 0, false},
		{"NotOnCosmos", []string{"SHOP_THROUGHPUT_INVENTORY=400", "COSMOS_ENDPOINT=https://example.documents.azure.com"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig("serve", nil, envOf(tt.env...), io.Discard)
			if (err == nil) != tt.ok || (tt.ok && c.ThroughputInventory != tt.want) {
				t.Errorf("throughput-inventory %d, err %v; want %d, ok %v", c.ThroughputInventory, err, tt.want, tt.ok)
			}
		})
	}
}

// TestThroughputInventoryThroughRun: SHOP_THROUGHPUT_INVENTORY provisions
// the inventory container alone; the others stay as SHOP_THROUGHPUT says
// (here unlimited).
func TestThroughputInventoryThroughRun(t *testing.T) {
	env := shopEnv(t.TempDir(), "SHOP_WORKERS=false", "SHOP_PARTITIONS=4", "SHOP_THROUGHPUT_INVENTORY=800")
	base, out := runShop(t, env)
	if !strings.Contains(out.String(), "inventory provisioned 800 RU/s apart") {
		t.Errorf("the start does not say the inventory's throughput:\n%s", out)
	}
	code, body, err := httpDo(http.DefaultClient, "GET", base+"/v1/admin/throughput", testToken(t, "boss", true), nil, nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /v1/admin/throughput = %d, %v: %s", code, err, body)
	}
	var got struct {
		Containers []struct {
			Container   string  `json:"container"`
			Provisioned float64 `json:"provisioned"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Containers {
		want := 0.0
		if c.Container == "inventory" {
			want = 800
		}
		if c.Provisioned != want {
			t.Errorf("%s: provisioned %v RU/s, want %v", c.Container, c.Provisioned, want)
		}
	}
}

// TestThroughputThroughRun: shop serve with SHOP_THROUGHPUT loads its
// sample unthrottled, then provisions every container, and reports the
// partitions on the admin route and on /metrics.
func TestThroughputThroughRun(t *testing.T) {
	env := shopEnv(t.TempDir(), "SHOP_WORKERS=false", "SHOP_PARTITIONS=4", "SHOP_THROUGHPUT=400", "SHOP_SEED=true")
	base, out := runShop(t, env)
	if !strings.Contains(out.String(), "400 RU/s provisioned per container") {
		t.Errorf("the start does not say the throughput:\n%s", out)
	}
	code, body, err := httpDo(http.DefaultClient, "GET", base+"/v1/admin/throughput", testToken(t, "boss", true), nil, nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /v1/admin/throughput = %d, %v: %s", code, err, body)
	}
	var got struct {
		Containers []struct {
			Container   string  `json:"container"`
			Provisioned float64 `json:"provisioned"`
			Partitions  []struct {
				Provisioned float64 `json:"provisioned"`
			} `json:"partitions"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Containers) == 0 {
		t.Fatalf("no containers reported: %s", body)
	}
	for _, c := range got.Containers {
		if c.Provisioned != 400 || len(c.Partitions) != 4 || c.Partitions[0].Provisioned != 100 {
			t.Errorf("%s: %v RU/s over %d partitions, want 400 over 4 of 100", c.Container, c.Provisioned, len(c.Partitions))
		}
	}
	code, body, err = httpDo(http.DefaultClient, "GET", base+"/metrics", "", nil, nil)
	if err != nil || code != http.StatusOK || !strings.Contains(string(body), `shop_store_partition_provisioned_per_second{db_collection_name="carts"`) {
		t.Errorf("GET /metrics = %d, %v; want the partitions' throughput in it", code, err)
	}
}
