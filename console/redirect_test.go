package console

import (
	"net/url"
	"strings"
	"testing"
)

func TestSafeNextAcceptsOnlyLocalPaths(t *testing.T) {
	for _, c := range []struct{ next, want string }{
		{"/streams", "/streams"},
		{"/live?stream=s-1#chat", "/live?stream=s-1#chat"},
		{"/harnesses/%C3%A9", "/harnesses/%C3%A9"},
		{"/", "/"},
		{"", "/"},
		{"streams", "/"},
		{"//evil.example/x", "/"},
		{"/\\evil.example/x", "/"},
		{"/%5Cevil.example/x", "/"},
		{"/%5cevil.example/x", "/"},
		{"/%255Cevil.example/x", "/"},
		{"/%2F%2Fevil.example", "/"},
		{"/%2f/evil.example", "/"},
		{"\\\\evil.example", "/"},
		{"https://evil.example/x", "/"},
		{"http:/evil.example", "/"},
		{"javascript:alert(1)", "/"},
		{"data:text/html,<script>", "/"},
		{"/\t/evil.example", "/"},
		{"/%09/evil.example", "/"},
		{"/x\r\nSet-Cookie: a=b", "/"},
		{"/x%0d%0aSet-Cookie:%20a=b", "/"},
		{" /streams", "/"},
		{"/x\x00", "/"},
		{"/x%00", "/"},
		{"/%zz", "/"},
		{"/" + strings.Repeat("a", maxNextLen), "/"},
	} {
		t.Run(c.next, func(t *testing.T) {
			if got := safeNext(c.next); got != c.want {
				t.Errorf("safeNext(%q) = %q, want %q", c.next, got, c.want)
			}
		})
	}
}

func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/streams", "//x", "/\\x", "/%5Cx", "https://x", "/%2F%2Fx", "/\t/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got == defaultPage {
			return
		}
		if got != next {
			t.Fatalf("safeNext(%q) = %q: a page is kept as given or replaced by the default", next, got)
		}
		for d := got; ; {
			if !strings.HasPrefix(d, "/") || strings.HasPrefix(d, "//") || strings.ContainsAny(d, "\\\t\r\n") {
				t.Fatalf("safeNext(%q) kept a path that reads as another origin: %q", next, d)
			}
			u, err := url.PathUnescape(d)
			if err != nil || u == d {
				break
			}
			d = u
		}
	})
}
