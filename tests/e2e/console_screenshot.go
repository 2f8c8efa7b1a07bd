package e2e

import (
	"flag"
)

var UpdateDocs = flag.Bool("update", false, "rewrite generated docs: the console's screenshots in docs/console/, the table of docs/errors.md")
