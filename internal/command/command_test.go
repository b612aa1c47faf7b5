package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"testing"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantPos   []string
		wantN     int
		wantUsage bool
		wantHelp  bool
	}{
		{"flags first", []string{"--n", "3", "a", "b"}, []string{"a", "b"}, 3, false, false},
		{"flags after", []string{"a", "--n=4", "b"}, []string{"a", "b"}, 4, false, false},
		{"no args", nil, nil, 0, false, false},
		{"unknown flag", []string{"a", "--nope"}, nil, 0, true, false},
		{"bad value", []string{"--n", "x"}, nil, 0, true, false},
		{"help", []string{"-h"}, nil, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFlags("thing", "[--n N] ARGS", io.Discard)
			n := fs.Int("n", 0, "a number")
			pos, err := parseArgs(fs, tt.args)
			switch {
			case tt.wantHelp:
				if !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("err = %v, want flag.ErrHelp", err)
				}
			case tt.wantUsage:
				if !IsUsage(err) {
					t.Fatalf("err = %v, want a usage error", err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if !slices.Equal(pos, tt.wantPos) || *n != tt.wantN {
					t.Fatalf("pos %q n %d, want %q %d", pos, *n, tt.wantPos, tt.wantN)
				}
			}
		})
	}
}

func TestIsUsage(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{usagef("x"), true},
		{fmt.Errorf("wrapped: %w", usagef("x")), true},
		{errors.New("x"), false},
		{nil, false},
	} {
		if got := IsUsage(tt.err); got != tt.want {
			t.Errorf("IsUsage(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
