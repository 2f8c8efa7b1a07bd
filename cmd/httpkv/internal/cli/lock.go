package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/httpkv/httpkv/client"
)

func lockCommand() *command {
	return &command{
		name: "lock", args: "NAME [-- COMMAND [ARG...]]", minArgs: 1, maxArgs: -1,
		summary: "hold a lock while a command runs, or until Ctrl-C",
		help: `Waits for the lock called NAME, as etcdctl lock does, then runs
COMMAND while holding it and releases it when COMMAND ends, whether it
exits or dies, passing on COMMAND's exit status. Without COMMAND it
prints the lock's key and holds the lock until Ctrl-C.

The lock is held by a lease of --ttl seconds that this command keeps
alive: if httpkv itself dies (kill -9, a lost machine), the lock passes
on when the lease expires. COMMAND gets the lock's key, lease and
revision in HTTPKV_LOCK_KEY, HTTPKV_LOCK_LEASE and HTTPKV_LOCK_REVISION,
and on Linux is killed if httpkv dies. If the lease is lost while
COMMAND runs (the server was out of reach for longer than the TTL),
COMMAND gets SIGTERM and httpkv exits 1: the lock is no longer held.

Waiters are served in the order they came; the server waits 5 minutes
at most a request, and after that this command asks again (at the back
of the queue). --timeout gives up sooner, exiting 1 (lock_timeout).`,
		examples: `# one backup at a time, whichever machine runs it
httpkv lock backups -- ./backup.sh --full
httpkv lock deploy --ttl 10 -- sh -c 'echo "holding $HTTPKV_LOCK_KEY"; ./deploy'
# hold it from the shell, until Ctrl-C
httpkv lock maintenance`,
		setup: func(fs *flag.FlagSet) action {
			ttl := fs.Int64("ttl", 60, "the TTL in seconds, `N`, of the lease that holds the lock: how soon it passes on if httpkv dies")
			timeout := fs.Duration("timeout", 0, "give up after waiting this `DURATION` (default: wait as long as it takes)")
			return func(ctx context.Context, x *call) error {
				if *ttl < 1 {
					return usagef(x.path, "--ttl must be at least 1")
				}
				name, argv := x.args[0], x.args[1:]
				s, err := startSession(ctx, x.api, *ttl)
				if err != nil {
					return err
				}
				defer s.close()
				wctx, cancel := ctx, context.CancelFunc(func() {})
				if *timeout > 0 {
					wctx, cancel = context.WithTimeout(ctx, *timeout)
				}
				held, err := x.api.Lock(wctx, name, s.id)
				timedOut := wctx.Err() != nil && ctx.Err() == nil
				cancel()
				if timedOut {
					return fmt.Errorf("lock_timeout: lock %q not held within %v", name, *timeout)
				}
				if err != nil {
					return err
				}
				if len(argv) == 0 {
					switch {
					case x.out.json():
						x.out.raw(held.Raw)
					default:
						x.out.line(printable(held.Key))
					}
					select {
					case <-ctx.Done():
						return nil
					case <-s.lost():
						return fmt.Errorf("lock %q lost: %w", name, s.err)
					}
				}
				return x.runLocked(ctx, s, name, held, argv)
			}
		},
	}
}

// runLocked runs argv while s holds the lock called name, and returns
// its exit status.
func (x *call) runLocked(ctx context.Context, s *session, name string, held *client.LockResponse, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = x.env.Stdin, x.env.Stdout, x.env.Stderr
	cmd.Env = append(os.Environ(),
		"HTTPKV_LOCK_KEY="+string(held.Key),
		"HTTPKV_LOCK_LEASE="+strconv.FormatInt(s.id, 10),
		"HTTPKV_LOCK_REVISION="+strconv.FormatInt(held.Header.Revision, 10))
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(x.env.Stderr, "httpkv: lock %q: %v\n", name, err)
		return ExitStatus(127)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		// Ctrl-C reached COMMAND too; a SIGTERM to httpkv alone is
		// passed on.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err = <-exited
	case <-s.lost():
		fmt.Fprintf(x.env.Stderr, "httpkv: lock %q lost (%v): stopping %s\n", name, s.err, argv[0])
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		return fmt.Errorf("lock %q lost while %s ran", name, argv[0])
	}
	return exitStatus(err)
}

// exitStatus is the ExitStatus of a command that ended with err: its
// exit code, or 128 and the signal that killed it, as shells say.
func exitStatus(err error) error {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus(128 + int(ws.Signal()))
	}
	return ExitStatus(ee.ExitCode())
}

func electCommand() *command {
	return &command{
		name: "elect", args: "NAME [VALUE]", minArgs: 1, maxArgs: 2,
		summary: "campaign to lead an election, or observe who leads it",
		help: `Campaigns in the election called NAME, as etcdctl elect does: waits
until it leads, then proclaims VALUE (empty without it), prints the
leader's key and value, and leads until Ctrl-C, when it resigns. The
candidacy is held by a lease of --ttl seconds that this command keeps
alive: if httpkv dies, another candidate leads once the lease expires.

With --observe it prints the leader now, and every change of leader or
of its value, until Ctrl-C, resuming by itself after a lost connection
or a restart of the server.

Prints the leader's key and value on two lines ("no leader" when nobody
leads); -o value prints the value alone (an empty line for no leader);
-o json the API's answers, one a line.`,
		examples: `httpkv elect db-primary 10.0.0.7:5432
httpkv elect db-primary --observe
httpkv elect db-primary --observe -o value | while read -r addr; do repoint "$addr"; done`,
		setup: func(fs *flag.FlagSet) action {
			ttl := fs.Int64("ttl", 60, "the TTL in seconds, `N`, of the lease that holds the candidacy")
			observe := fs.Bool("observe", false, "print the leader, and each change of it, instead of campaigning")
			return func(ctx context.Context, x *call) error {
				name := x.args[0]
				if *observe {
					if len(x.args) > 1 {
						return usagef(x.path, "--observe takes no VALUE")
					}
					return x.observe(ctx, name)
				}
				if *ttl < 1 {
					return usagef(x.path, "--ttl must be at least 1")
				}
				var value []byte
				if len(x.args) > 1 {
					value = []byte(x.args[1])
				}
				s, err := startSession(ctx, x.api, *ttl)
				if err != nil {
					return endOfStream(ctx, err) // Ctrl-C before the campaign began
				}
				defer s.close()
				won, err := x.api.Campaign(ctx, name, s.id, value)
				if err != nil {
					return endOfStream(ctx, err)
				}
				switch {
				case x.out.json():
					x.out.raw(won.Raw)
				case x.out.value():
					x.out.line(value)
				default:
					x.out.line(printable(won.Leader.Key))
					x.out.line(printable(value))
				}
				select {
				case <-ctx.Done():
				case <-s.lost():
					return fmt.Errorf("leadership of %q lost: %w", name, s.err)
				}
				rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
				defer cancel()
				_, err = x.api.Resign(rctx, name, won.Leader)
				return err
			}
		},
	}
}

// observe prints who leads the election name, and every change.
func (x *call) observe(ctx context.Context, name string) error {
	for m, err := range x.api.Observe(ctx, name, x.onRetry("elect --observe")) {
		if err != nil {
			return endOfStream(ctx, err)
		}
		x.retried = false
		switch {
		case x.out.json():
			x.out.raw(m.Raw)
		case m.KV == nil && x.out.value():
			x.out.line(nil)
		case m.KV == nil:
			x.out.linef("no leader")
		case x.out.value():
			x.out.line(m.KV.Value)
		default:
			x.out.line(printable(m.KV.Key))
			x.out.line(printable(m.KV.Value))
		}
	}
	return nil
}
