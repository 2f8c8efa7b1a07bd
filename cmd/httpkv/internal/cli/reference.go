package cli

import (
	"fmt"
	"io"
	"strings"
)

// Reference writes the reference of the data commands in Markdown: for
// each command, its help as "httpkv COMMAND --help" prints it. docs/cli.md
// is this, kept up to date by a test.
func Reference(w io.Writer) {
	var b strings.Builder
	b.WriteString(`# httpkv command reference

<!-- Generated from the commands' own help by
     go test ./cmd/httpkv/internal/cli -run TestReference -update
     Do not edit: a test fails while this file differs from the help. -->

The data commands of the httpkv binary, each a client of a running
server's HTTP API (the README shows them at work). This is what
` + "`httpkv COMMAND --help`" + ` prints, command by command.

Every command exits 0 on success, 1 when the API answers an error (its
code and message on stderr: ` + "`httpkv: key_not_found: ...`" + `) or the
server cannot be reached, and 2 for a usage error (with a "did you mean"
for a mistyped flag or command). ` + "`httpkv lock NAME -- COMMAND`" + ` exits
with COMMAND's status. Flags may stand before or after the arguments;
after ` + "`--`" + ` everything is an argument.

`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "- [`httpkv %s`](#httpkv-%s): %s\n", c.name, c.name, c.summary)
	}
	for _, c := range commands() {
		writeReference(&b, c.name, c)
		for _, s := range c.subs {
			writeReference(&b, c.name+" "+s.name, s)
		}
	}
	io.WriteString(w, b.String())
}

func writeReference(b *strings.Builder, path string, c *command) {
	fmt.Fprintf(b, "\n## httpkv %s\n\n%s%s.\n\n```text\n", path, strings.ToUpper(c.summary[:1]), c.summary[1:])
	writeHelp(b, path, c)
	b.WriteString("```\n")
}
