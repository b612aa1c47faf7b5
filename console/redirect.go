package console

import (
	"net/url"
	"strings"
	"unicode"
)

// defaultPage is where a login goes when it names no page, or one that is
// not a path of this console.
const defaultPage = "/"

// maxNextLen bounds a login's next page; the UI's own paths are far shorter.
const maxNextLen = 2048

// safeNext returns next when it is a path of this console, and
// defaultPage otherwise (issue #21, finding 5). A path qualifies when it is
// absolute ("/x") and no reading of it names another origin: not
// scheme-relative ("//x"), no backslash (browsers read "/\x" as "//x"),
// none after percent-decoding ("/%5Cx"), no control or space characters
// (browsers drop tabs and newlines, so "/\t/x" is "//x"), and no scheme or
// host of its own.
func safeNext(next string) string {
	if next == "" || len(next) > maxNextLen || !localPath(next) {
		return defaultPage
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return defaultPage
	}
	// A server or a browser may decode the path again before it is used:
	// every decoded form must be a local path too.
	for decoded := next; ; {
		d, err := url.PathUnescape(decoded)
		if err != nil || !localPath(d) {
			return defaultPage
		}
		if d == decoded {
			return next
		}
		decoded = d
	}
}

// localPath reports whether p starts with one slash and holds no
// backslash, control or space character.
func localPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return false
	}
	return !strings.ContainsFunc(p, func(r rune) bool {
		return r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar
	})
}
