package eval

import (
	"errors"
	"testing"
)

func TestOpenModelSpecs(t *testing.T) {
	m, err := OpenModel("expert", "")
	if err != nil || m.Factory == nil || m.Generate != nil {
		t.Fatalf("expert: %+v %v", m, err)
	}
	m.Close()
	for _, c := range []struct{ spec, remote string }{
		{"http://127.0.0.1:9/v1", ""},
		{"no/such/folder", ""},
		{"", ""},
	} {
		if _, err := OpenModel(c.spec, c.remote); !errors.Is(err, ErrModelSpec) {
			t.Errorf("OpenModel(%q, %q): %v, want ErrModelSpec", c.spec, c.remote, err)
		}
	}
	m, err = OpenModel("http://127.0.0.1:9/v1", "qwen")
	if err != nil || m.Generate == nil {
		t.Fatalf("remote: %v", err)
	}
	m.Close()
}
