// Package cli is the httpkv binary's data commands: get, put, watch,
// txn, lease, lock, elect and the others of API.md's "Command line",
// each a client of a running server's HTTP API through package client.
//
// Every command is an entry of the table commands returns: its name,
// its arguments, its help and examples, the flags it adds to the common
// ones (--url, --token, --user, --cacert, -o), and what it does. The
// table is the one source of the help ("httpkv COMMAND --help"), of the
// reference in docs/cli.md (Reference writes it; a test keeps the file
// up to date) and of the "did you mean" for a mistyped command.
//
// Flags may stand before or after the arguments, and after "--"
// everything is an argument (parse.go). A command's error decides the
// process's exit status (Report): 0 on success, 1 when the API answers
// an error (its code and message on stderr), 2 for a usage error, and
// for "lock NAME -- COMMAND" the status of COMMAND.
package cli
