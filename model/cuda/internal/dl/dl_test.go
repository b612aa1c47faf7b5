package dl

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestOpenMissingLibraryIsAnError(t *testing.T) {
	_, err := Open("libdoes-not-exist-livehat.so.1", "libdoes-not-exist-livehat.so")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open of missing libraries: %v, want ErrNotFound", err)
	}
	for _, name := range []string{"libdoes-not-exist-livehat.so.1", "libdoes-not-exist-livehat.so"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if _, err := Open(); err == nil {
		t.Error("Open() without names succeeded")
	}
}

func TestResolveAgainstLibc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("libc.so.6 is the Linux C library")
	}
	lib, err := Open("libc.so.6")
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	addrs, err := lib.Resolve([]Symbol{
		{Names: []string{"strlen_livehat_absent", "strlen"}},
		{Names: []string{"no_such_symbol_livehat"}, Optional: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if addrs[0] == 0 || addrs[1] != 0 {
		t.Fatalf("addresses %#x: want the fallback name resolved and the optional one 0", addrs)
	}
	s := CString("héllo")
	if n := Call(addrs[0], uintptr(unsafe.Pointer(&s[0]))); n != uintptr(len("héllo")) {
		t.Errorf("strlen through Call = %d, want %d", n, len("héllo"))
	}
	if got := GoString(uintptr(unsafe.Pointer(&s[0])), 100); got != "héllo" {
		t.Errorf("GoString = %q", got)
	}
	if got := GoString(uintptr(unsafe.Pointer(&s[0])), 2); got != "h\xc3" {
		t.Errorf("GoString with limit 2 = %q", got)
	}
	if GoString(0, 10) != "" {
		t.Error("GoString(0) not empty")
	}

	_, err = lib.Resolve([]Symbol{{Names: []string{"no_such_a", "no_such_b"}}})
	if err == nil || !strings.Contains(err.Error(), "no_such_a or no_such_b") {
		t.Errorf("missing required symbol: %v", err)
	}
}
