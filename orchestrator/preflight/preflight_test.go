package preflight

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

func TestParsePreflight(t *testing.T) {
	data, err := bundletest.PreflightNoFio, error(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := results.ParsePreflight(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Failed()) != 0 || p.FioIOPS(512) != 0 || len(p.Fingerprint) == 0 {
		t.Errorf("got %d failed checks, fio %v, fingerprint %d bytes; want 0, 0, some", len(p.Failed()), p.FioIOPS(512), len(p.Fingerprint))
	}
	if err := uringUsable(p); err != nil {
		t.Errorf("uringUsable: %v", err)
	}
	side := serverSide(p)
	var names []string
	for _, c := range side.Checks {
		names = append(names, c.Name)
	}
	if want := []string{"odirect", "io_uring", "libaio"}; !slices.Equal(names, want) {
		t.Errorf("serverSide checks: got %v, want %v", names, want)
	}
	failed := bytes.Replace(data, []byte(`"status": "pass",
      "detail": "kernel.io_uring_disabled`), []byte(`"status": "fail",
      "detail": "kernel.io_uring_disabled`), 1)
	p, err = results.ParsePreflight(failed)
	if err != nil {
		t.Fatal(err)
	}
	if err := uringUsable(p); !errors.Is(err, errUringRefused) {
		t.Errorf("uringUsable with a failed io_uring check: got %v, want errUringRefused", err)
	}
	if _, err := results.ParsePreflight([]byte(`{"checks":[]}`)); err == nil {
		t.Errorf("no checks: got nil error")
	}
}
