package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunExitCodes(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		output string
	}{
		{[]string{"help"}, 0, "Commands:"},
		{[]string{"nonsense"}, 2, `unknown command "nonsense"`},
		{[]string{"harness"}, 2, "missing subcommand"},
		{[]string{"harness", "validate"}, 2, "name at least one harness file"},
		{[]string{"harness", "validate", "examples/harness/demo.json"}, 0, "ok"},
		{[]string{"harness", "validate", "harness/testdata/broken/02-unknown-field.json"}, 1, "did you mean"},
		{[]string{"serve", "extra-arg"}, 2, "serve takes no arguments"},
		{[]string{"serve", "--log-level", "loud"}, 2, "--log-level"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), c.args, strings.NewReader(""), &out, &errOut)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr: %s)", c.args, code, c.code, errOut.String())
		}
		if all := out.String() + errOut.String(); !strings.Contains(all, c.output) {
			t.Errorf("%v: output lacks %q:\n%s", c.args, c.output, all)
		}
	}
}
