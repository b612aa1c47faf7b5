package plugins

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
)

// Semver is a parsed semantic version (https://semver.org).
type Semver struct {
	Major, Minor, Patch uint64
	// Pre is the pre-release part after "-", empty for a release.
	Pre string
	// Build is the metadata after "+"; it does not take part in ordering.
	Build string
}

// ParseSemver parses MAJOR.MINOR.PATCH[-pre][+build] without a leading "v".
func ParseSemver(s string) (Semver, error) {
	var v Semver
	if s == "" {
		return v, fmt.Errorf("semver: empty")
	}
	if len(s) > 128 {
		return v, fmt.Errorf("semver %.20q…: longer than 128 bytes", s)
	}
	rest := s
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		v.Build, rest = rest[i+1:], rest[:i]
		if !validIdents(v.Build, false) {
			return Semver{}, fmt.Errorf("semver %q: bad build metadata", s)
		}
	}
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		v.Pre, rest = rest[i+1:], rest[:i]
		if !validIdents(v.Pre, true) {
			return Semver{}, fmt.Errorf("semver %q: bad pre-release", s)
		}
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return Semver{}, fmt.Errorf("semver %q: want MAJOR.MINOR.PATCH", s)
	}
	nums := [3]*uint64{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		if !numeric(p) || (len(p) > 1 && p[0] == '0') {
			return Semver{}, fmt.Errorf("semver %q: %q is not a number without leading zeros", s, p)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return Semver{}, fmt.Errorf("semver %q: %w", s, err)
		}
		*nums[i] = n
	}
	return v, nil
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validIdents checks dot-separated identifiers of [0-9A-Za-z-]; numeric
// pre-release identifiers must not have leading zeros.
func validIdents(s string, pre bool) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
				return false
			}
		}
		if pre && numeric(id) && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

// String formats v back into its canonical text.
func (v Semver) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	if v.Build != "" {
		s += "+" + v.Build
	}
	return s
}

// Compare orders versions by semver precedence: -1, 0 or +1.
func (v Semver) Compare(w Semver) int {
	for _, d := range [3][2]uint64{{v.Major, w.Major}, {v.Minor, w.Minor}, {v.Patch, w.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.Pre == w.Pre:
		return 0
	case v.Pre == "":
		return 1
	case w.Pre == "":
		return -1
	}
	a, b := strings.Split(v.Pre, "."), strings.Split(w.Pre, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := comparePreIdent(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func comparePreIdent(a, b string) int {
	an, bn := numeric(a), numeric(b)
	switch {
	case an && bn:
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

func sha256Sum(data []byte) [32]byte { return sha256.Sum256(data) }
