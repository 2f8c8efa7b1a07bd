package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/httpkv/httpkv/client"
)

// selectorFlags are the range selectors of the commands that read,
// delete, watch or export more than a key.
type selectorFlags struct {
	prefix, fromKey bool
	rangeEnd        string
}

func (f *selectorFlags) add(fs *flag.FlagSet) {
	fs.BoolVar(&f.prefix, "prefix", false, "every key that starts with KEY, not KEY alone (every key, with an empty KEY)")
	fs.BoolVar(&f.fromKey, "from-key", false, "every key >= KEY")
	fs.StringVar(&f.rangeEnd, "range-end", "", "every key in [KEY, `END`)")
}

// selector is the range the flags and key name. given reports whether
// range-end was given (an empty end is every key >= KEY, as in etcd).
func (f *selectorFlags) selector(x *call, key string) (client.Selector, error) {
	n := 0
	for _, b := range []bool{f.prefix, f.fromKey, x.given["range-end"]} {
		if b {
			n++
		}
	}
	if n > 1 {
		return client.Selector{}, usagef(x.path, "--prefix, --from-key and --range-end go one at a time")
	}
	switch {
	case f.prefix:
		return client.Prefix(key), nil
	case f.fromKey:
		return client.FromKey(key), nil
	case x.given["range-end"]:
		return client.Range(key, f.rangeEnd), nil
	}
	if key == "" {
		return client.Selector{}, usagef(x.path, "the key is empty: give a key, or --prefix \"\" for every key")
	}
	return client.Key(key), nil
}

func getCommand() *command {
	return &command{
		name: "get", args: "KEY", minArgs: 1, maxArgs: 1,
		summary: "read a key, or the keys of a range",
		help: `Reads KEY, or every key of a range: --prefix, --from-key or
--range-end, in key order, following every page of the API's answer
(each page read at the first page's revision: a consistent snapshot).
A missing KEY exits 1 (key_not_found); an empty range prints nothing.

Prints each key on a line and its value on the next; -o value prints the
value alone (exactly its bytes for a single KEY, one value a line for a
range); -o json prints each answer of the API, one a line.`,
		examples: `httpkv get config/db/url
# the value alone, for a script
URL=$(httpkv get config/db/url -o value)
# every key under config/, their names only
httpkv get config/ --prefix --keys-only
# as it was at revision 42
httpkv get config/db/url --rev 42
httpkv get "" --prefix --count-only`,
		setup: func(fs *flag.FlagSet) action {
			var sel selectorFlags
			sel.add(fs)
			rev := fs.Int64("rev", 0, "read as of revision `REV` (default: now)")
			keysOnly := fs.Bool("keys-only", false, "print the keys, not their values")
			countOnly := fs.Bool("count-only", false, "print how many keys there are")
			limit := fs.Int64("limit", 0, "read at most `N` keys (default: all of them)")
			return func(ctx context.Context, x *call) error {
				s, err := sel.selector(x, x.args[0])
				if err != nil {
					return err
				}
				if *limit < 0 {
					return usagef(x.path, "--limit must not be negative")
				}
				if s.IsKey() && !*countOnly && !*keysOnly {
					got, err := x.api.Get(ctx, x.args[0], client.GetOptions{Revision: *rev})
					if err != nil {
						return err
					}
					switch {
					case x.out.json():
						x.out.raw(got.Raw)
					case x.out.value():
						x.out.w.Write(got.KV.Value)
					default:
						x.out.kv(&got.KV, false)
					}
					return nil
				}
				for page, err := range x.api.List(ctx, s, client.ListOptions{Revision: *rev, Limit: *limit, KeysOnly: *keysOnly, CountOnly: *countOnly}) {
					if err != nil {
						return err
					}
					switch {
					case x.out.json():
						x.out.raw(page.Raw)
					case *countOnly:
						x.out.linef("%d", page.Count)
					default:
						for i := range page.KVs {
							if x.out.value() {
								x.out.line(page.KVs[i].Value)
							} else {
								x.out.kv(&page.KVs[i], *keysOnly)
							}
						}
					}
				}
				return nil
			}
		},
	}
}

func putCommand() *command {
	return &command{
		name: "put", args: "KEY [VALUE]", minArgs: 1, maxArgs: 2,
		summary: "write a key",
		help: `Writes VALUE to KEY, or, without VALUE, what stdin holds, byte for byte
(a trailing newline included). --if-match and --if-absent make it
conditional: when the condition fails it exits 1 (precondition_failed)
and writes nothing.

Prints OK and the revision; -o value prints the revision alone (with
--ttl, the lease too); -o json the API's answer.`,
		examples: `httpkv put config/db/url postgres://db:5432
httpkv put config/app.json < app.json
# a key that expires in 60 s unless its lease is kept alive
httpkv put session/42 alice --ttl 60
# compare-and-swap: only if nobody changed it since revision 17
httpkv put counter 8 --if-match 17
# create, never overwrite
httpkv put owner me --if-absent`,
		setup: func(fs *flag.FlagSet) action {
			lease := fs.Int64("lease", 0, "attach the key to the lease `ID`")
			ttl := fs.Int64("ttl", 0, "give the key a lease of its own of `N` seconds: it expires unless kept alive")
			ifMatch := fs.Int64("if-match", 0, "write only if the key's mod revision is `REV` (it is unchanged since)")
			ifAbsent := fs.Bool("if-absent", false, "write only if the key does not exist")
			return func(ctx context.Context, x *call) error {
				if *lease != 0 && *ttl != 0 {
					return usagef(x.path, "--lease and --ttl go one at a time")
				}
				if x.given["ttl"] && *ttl < 1 {
					return usagef(x.path, "--ttl must be at least 1")
				}
				value, err := argOrStdin(x, 1)
				if err != nil {
					return err
				}
				put, err := x.api.Put(ctx, x.args[0], value, client.PutOptions{Lease: *lease, TTL: *ttl, IfMatch: *ifMatch, IfAbsent: *ifAbsent})
				if err != nil {
					return err
				}
				said := fmt.Sprintf("OK (revision %d)", put.Header.Revision)
				if put.Lease != 0 {
					said = fmt.Sprintf("OK (revision %d, lease %d)", put.Header.Revision, put.Lease)
				}
				x.out.answer(put.Raw, strconv.FormatInt(put.Header.Revision, 10), said)
				return nil
			}
		},
	}
}

// argOrStdin is argument i, or what stdin holds when it is absent.
func argOrStdin(x *call, i int) ([]byte, error) {
	if len(x.args) > i {
		return []byte(x.args[i]), nil
	}
	b, err := io.ReadAll(x.env.Stdin)
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	return b, nil
}

func patchCommand() *command {
	return &command{
		name: "patch", args: "KEY [PATCH]", minArgs: 1, maxArgs: 2,
		summary: "change part of a key's JSON value",
		help: `Applies PATCH (or, without it, what stdin holds) to the JSON value of
KEY, on the server, atomically: a JSON Merge Patch (RFC 7396), an
object whose fields replace those of the value (null deletes one), or a
JSON Patch (RFC 6902), an array of operations. --type says which; by
default an array is a JSON Patch and anything else a merge patch. A
merge patch of a missing key creates it; a JSON Patch needs the key.

Prints OK, the revision and the new value; -o value prints the new value
alone; -o json the API's answer.`,
		examples: `httpkv patch config/app.json '{"replicas": 3, "debug": null}'
httpkv patch config/app.json '[{"op": "add", "path": "/tags/-", "value": "blue"}]'
# only if it is still as read at revision 17
httpkv patch config/app.json '{"replicas": 4}' --if-match 17`,
		setup: func(fs *flag.FlagSet) action {
			typ := fs.String("type", "", "the kind of patch, `TYPE` merge or json (default: json for an array, merge otherwise)")
			ifMatch := fs.Int64("if-match", 0, "apply only if the key's mod revision is `REV`")
			return func(ctx context.Context, x *call) error {
				o := client.PatchOptions{IfMatch: *ifMatch}
				switch *typ {
				case "":
				case "merge":
					o.Type = client.MergePatch
				case "json":
					o.Type = client.JSONPatch
				default:
					return usagef(x.path, "--type must be merge or json, not %q", *typ)
				}
				patch, err := argOrStdin(x, 1)
				if err != nil {
					return err
				}
				got, err := x.api.Patch(ctx, x.args[0], patch, o)
				if err != nil {
					return err
				}
				switch {
				case x.out.json():
					x.out.raw(got.Raw)
				case x.out.value():
					x.out.line(got.KV.Value)
				default:
					x.out.linef("OK (revision %d)", got.Header.Revision)
					x.out.line(printable(got.KV.Value))
				}
				return nil
			}
		},
	}
}

func delCommand() *command {
	return &command{
		name: "del", args: "KEY", minArgs: 1, maxArgs: 1,
		summary: "delete a key, or the keys of a range",
		help: `Deletes KEY, or every key of a range (--prefix, --from-key,
--range-end) at one revision. Deleting nothing is not an error, and
makes no revision.

Prints how many keys were deleted (also with -o value); -o json the
API's answer.`,
		examples: `httpkv del config/db/url
httpkv del tmp/ --prefix
# only if unchanged since revision 17
httpkv del lock/owner --if-match 17`,
		setup: func(fs *flag.FlagSet) action {
			var sel selectorFlags
			sel.add(fs)
			prevKV := fs.Bool("prev-kv", false, "print the deleted keys and their values too")
			ifMatch := fs.Int64("if-match", 0, "delete KEY only if its mod revision is `REV`")
			return func(ctx context.Context, x *call) error {
				s, err := sel.selector(x, x.args[0])
				if err != nil {
					return err
				}
				if *ifMatch != 0 && !s.IsKey() {
					return usagef(x.path, "--if-match is for a single key, not a range")
				}
				del, err := x.api.Delete(ctx, s, client.DeleteOptions{PrevKV: *prevKV, IfMatch: *ifMatch})
				if err != nil {
					return err
				}
				if x.out.json() {
					x.out.raw(del.Raw)
					return nil
				}
				x.out.linef("%d", del.Deleted)
				for i := range del.PrevKVs {
					x.out.kv(&del.PrevKVs[i], false)
				}
				return nil
			}
		},
	}
}
