package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/client"
)

// simpleCommand is a command of the auth groups: it makes one call and
// says what it did (what, for people; nothing with -o value).
func simpleCommand(name, args string, n int, summary, help, examples string,
	do func(ctx context.Context, x *call) (json.RawMessage, string, error)) *command {
	return &command{
		name: name, args: args, minArgs: n, maxArgs: n, summary: summary, help: help, examples: examples,
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, x *call) error {
				raw, what, err := do(ctx, x)
				if err != nil {
					return err
				}
				x.out.answer(raw, "", what)
				return nil
			}
		},
	}
}

// password is the password of NAME[:PASSWORD]: after the colon, or
// asked for on the terminal, or the first line of stdin when there is
// no terminal.
func password(x *call, arg string) (name, pw string, err error) {
	name, pw, ok := strings.Cut(arg, ":")
	if ok {
		return name, pw, nil
	}
	if x.env.ReadPassword != nil {
		pw, err = x.env.ReadPassword(fmt.Sprintf("Password of %s: ", name))
		return name, pw, err
	}
	line, err := bufio.NewReader(x.env.Stdin).ReadString('\n')
	if line == "" && err != nil {
		return "", "", usagef(x.path, "no password: give NAME:PASSWORD, or the password on stdin")
	}
	return name, strings.TrimRight(line, "\r\n"), nil
}

func userCommand() *command {
	return &command{
		name: "user", summary: "add, list, change and delete users (auth)",
		help: `Users of auth, as etcdctl user: each has a password and roles. Only
root may manage them once auth is on.`,
		examples: `httpkv user add root:s3cret
httpkv user grant-role root root
httpkv auth enable
httpkv user add web --user root:s3cret      # asks for web's password`,
		subs: []*command{
			simpleCommand("add", "NAME[:PASSWORD]", 1, "add a user",
				`Adds the user NAME, with PASSWORD, or a password asked for on the
terminal (read from stdin without one).`,
				`httpkv user add alice:s3cret
printf '%s\n' "$PW" | httpkv user add alice`,
				func(ctx context.Context, x *call) (json.RawMessage, string, error) {
					name, pw, err := password(x, x.args[0])
					if err != nil {
						return nil, "", err
					}
					r, err := x.api.AddUser(ctx, name, pw)
					if err != nil {
						return nil, "", err
					}
					return r.Raw, "user " + name + " added", nil
				}),
			simpleCommand("delete", "NAME", 1, "delete a user, ending its tokens", `Deletes the user NAME; its tokens stop working.`,
				`httpkv user delete alice`,
				func(ctx context.Context, x *call) (json.RawMessage, string, error) {
					r, err := x.api.DeleteUser(ctx, x.args[0])
					if err != nil {
						return nil, "", err
					}
					return r.Raw, "user " + x.args[0] + " deleted", nil
				}),
			{
				name: "get", args: "NAME", minArgs: 1, maxArgs: 1, summary: "print a user's roles",
				help: `Prints the roles of the user NAME, one a line.`, examples: `httpkv user get alice`,
				setup: func(*flag.FlagSet) action {
					return func(ctx context.Context, x *call) error {
						u, err := x.api.User(ctx, x.args[0])
						if err != nil {
							return err
						}
						x.names(u.Raw, u.Roles)
						return nil
					}
				},
			},
			{
				name: "list", args: "", minArgs: 0, maxArgs: 0, summary: "list the users",
				help: `Lists the users, one a line.`, examples: `httpkv user list`,
				setup: func(*flag.FlagSet) action {
					return func(ctx context.Context, x *call) error {
						r, err := x.api.Users(ctx)
						if err != nil {
							return err
						}
						x.names(r.Raw, r.Names)
						return nil
					}
				},
			},
			simpleCommand("passwd", "NAME[:PASSWORD]", 1, "change a user's password",
				`Sets the password of the user NAME to PASSWORD, or to a password asked
for on the terminal (read from stdin without one). Its tokens stop
working.`,
				`httpkv user passwd alice`,
				func(ctx context.Context, x *call) (json.RawMessage, string, error) {
					name, pw, err := password(x, x.args[0])
					if err != nil {
						return nil, "", err
					}
					r, err := x.api.ChangePassword(ctx, name, pw)
					if err != nil {
						return nil, "", err
					}
					return r.Raw, "password of " + name + " changed", nil
				}),
			simpleCommand("grant-role", "NAME ROLE", 2, "grant a role to a user", `Grants the role ROLE to the user NAME.`,
				`httpkv user grant-role alice config-reader`,
				func(ctx context.Context, x *call) (json.RawMessage, string, error) {
					r, err := x.api.GrantRole(ctx, x.args[0], x.args[1])
					if err != nil {
						return nil, "", err
					}
					return r.Raw, "role " + x.args[1] + " granted to " + x.args[0], nil
				}),
			simpleCommand("revoke-role", "NAME ROLE", 2, "take a role from a user", `Takes the role ROLE from the user NAME.`,
				`httpkv user revoke-role alice config-reader`,
				func(ctx context.Context, x *call) (json.RawMessage, string, error) {
					r, err := x.api.RevokeRole(ctx, x.args[0], x.args[1])
					if err != nil {
						return nil, "", err
					}
					return r.Raw, "role " + x.args[1] + " revoked from " + x.args[0], nil
				}),
		},
	}
}

// names prints a list of names, one a line, or the answer as it is.
func (x *call) names(raw json.RawMessage, names []string) {
	if x.out.json() {
		x.out.raw(raw)
		return
	}
	for _, n := range names {
		x.out.linef("%s", n)
	}
}

func roleCommand() *command {
	return &command{
		name: "role", summary: "add, list, change and delete roles (auth)",
		help: `Roles of auth, as etcdctl role: each holds permissions (read, write or
readwrite) on keys and ranges. Only root may manage them once auth is
on.`,
		examples: `httpkv role add config-reader
httpkv role grant-permission config-reader read config/ --prefix
httpkv user grant-role web config-reader`,
		subs: []*command{
			simpleCommand("add", "NAME", 1, "add a role", `Adds the role NAME, without permissions.`,
				`httpkv role add config-reader`,
				func(ctx context.Context, x *call) (json.RawMessage, string, error) {
					r, err := x.api.AddRole(ctx, x.args[0])
					if err != nil {
						return nil, "", err
					}
					return r.Raw, "role " + x.args[0] + " added", nil
				}),
			simpleCommand("delete", "NAME", 1, "delete a role", `Deletes the role NAME, and takes it from every user.`,
				`httpkv role delete config-reader`,
				func(ctx context.Context, x *call) (json.RawMessage, string, error) {
					r, err := x.api.DeleteRole(ctx, x.args[0])
					if err != nil {
						return nil, "", err
					}
					return r.Raw, "role " + x.args[0] + " deleted", nil
				}),
			{
				name: "get", args: "NAME", minArgs: 1, maxArgs: 1, summary: "print a role's permissions",
				help: `Prints the permissions of the role NAME, one a line: the type, then
the key or range.`,
				examples: `httpkv role get config-reader`,
				setup: func(*flag.FlagSet) action {
					return func(ctx context.Context, x *call) error {
						r, err := x.api.Role(ctx, x.args[0])
						if err != nil {
							return err
						}
						if x.out.json() {
							x.out.raw(r.Raw)
							return nil
						}
						for _, p := range r.Permissions {
							x.out.linef("%s %s", p.Type, describePermission(p))
						}
						return nil
					}
				},
			},
			{
				name: "list", args: "", minArgs: 0, maxArgs: 0, summary: "list the roles",
				help: `Lists the roles, one a line.`, examples: `httpkv role list`,
				setup: func(*flag.FlagSet) action {
					return func(ctx context.Context, x *call) error {
						r, err := x.api.Roles(ctx)
						if err != nil {
							return err
						}
						x.names(r.Raw, r.Names)
						return nil
					}
				},
			},
			{
				name: "grant-permission", args: "NAME TYPE KEY", minArgs: 3, maxArgs: 3,
				summary: "give a role read, write or readwrite on a key or a range",
				help: `Gives the role NAME the permission TYPE (read, write or readwrite) on
KEY, or on a range: --prefix, --from-key or --range-end.`,
				examples: `httpkv role grant-permission config-reader read config/ --prefix
httpkv role grant-permission ops readwrite "" --from-key`,
				setup: func(fs *flag.FlagSet) action {
					var sel selectorFlags
					sel.add(fs)
					return func(ctx context.Context, x *call) error {
						typ := x.args[1]
						switch typ {
						case "read", "write", "readwrite":
						default:
							return usagef(x.path, "TYPE must be read, write or readwrite, not %q", typ)
						}
						s, err := permissionRange(x, &sel, x.args[2])
						if err != nil {
							return err
						}
						r, err := x.api.GrantPermission(ctx, x.args[0], s, typ)
						if err != nil {
							return err
						}
						x.out.answer(r.Raw, "", fmt.Sprintf("%s on %s granted to role %s", typ, s, x.args[0]))
						return nil
					}
				},
			},
			{
				name: "revoke-permission", args: "NAME KEY", minArgs: 2, maxArgs: 2,
				summary: "take a role's permission on a key or a range",
				help: `Takes from the role NAME its permission on KEY, or on a range:
--prefix, --from-key or --range-end, as it was granted.`,
				examples: `httpkv role revoke-permission config-reader config/ --prefix`,
				setup: func(fs *flag.FlagSet) action {
					var sel selectorFlags
					sel.add(fs)
					return func(ctx context.Context, x *call) error {
						s, err := permissionRange(x, &sel, x.args[1])
						if err != nil {
							return err
						}
						r, err := x.api.RevokePermission(ctx, x.args[0], s.Key, s.RangeEnd())
						if err != nil {
							return err
						}
						x.out.answer(r.Raw, "", fmt.Sprintf("permission on %s revoked from role %s", s, x.args[0]))
						return nil
					}
				},
			},
		},
	}
}

// permissionRange is the range of a permission: as selectorFlags
// says, but an empty KEY with --prefix or --from-key is every key.
func permissionRange(x *call, sel *selectorFlags, key string) (client.Selector, error) {
	if key == "" && (sel.prefix || sel.fromKey) {
		return client.FromKey("\x00"), nil
	}
	return sel.selector(x, key)
}

// describePermission says what keys a permission covers.
func describePermission(p client.Permission) string {
	switch {
	case p.RangeEnd == nil:
		return fmt.Sprintf("%q", p.Key)
	case string(p.RangeEnd) == "\x00":
		return fmt.Sprintf("[%q, every key after)", p.Key)
	}
	return fmt.Sprintf("[%q, %q)", p.Key, p.RangeEnd)
}

func authCommand() *command {
	return &command{
		name: "auth", summary: "turn auth on or off, or say whether it is on",
		help: `Auth, as etcdctl auth: turning it on needs a user root with the role
root; from then on every call needs a token (--token, or --user to log
in).`,
		examples: `httpkv user add root:s3cret
httpkv user grant-role root root
httpkv auth enable
httpkv auth status --user root:s3cret`,
		subs: []*command{
			authSwitch("enable", "turn auth on", `Turns auth on. It needs a user root with the role root.`,
				func(ctx context.Context, c *client.Client) (*client.AuthStatusResponse, error) {
					return c.EnableAuth(ctx)
				}),
			authSwitch("disable", "turn auth off", `Turns auth off; tokens stop working. Only root may.`,
				func(ctx context.Context, c *client.Client) (*client.AuthStatusResponse, error) {
					return c.DisableAuth(ctx)
				}),
			authSwitch("status", "say whether auth is on", `Prints whether auth is on: enabled or disabled (-o value: true or false).`,
				func(ctx context.Context, c *client.Client) (*client.AuthStatusResponse, error) {
					return c.AuthStatus(ctx)
				}),
		},
	}
}

func authSwitch(name, summary, help string, do func(context.Context, *client.Client) (*client.AuthStatusResponse, error)) *command {
	return &command{
		name: name, minArgs: 0, maxArgs: 0, summary: summary, help: help, examples: "httpkv auth " + name,
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, x *call) error {
				r, err := do(ctx, x.api)
				if err != nil {
					return err
				}
				said := "auth disabled"
				if r.Enabled {
					said = "auth enabled"
				}
				x.out.answer(r.Raw, strconv.FormatBool(r.Enabled), said)
				return nil
			}
		},
	}
}
