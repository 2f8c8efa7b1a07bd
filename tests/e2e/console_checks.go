package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// SignIn signs in on the sign-in form the page shows.
func (p *ConsolePage) SignIn(name, password string) {
	p.Tb.Helper()
	p.WaitText(".login h2", "Sign in")
	p.MarkLabels()
	p.FillLabelled("Name", name)
	p.FillLabelled("Password", password)
	p.Click(".login button", "Sign in")
}

// consoleHeapLimit bounds the page's JavaScript heap after it shows any
// one value: what the console may spend on a value is bounded by its
// own limits (web/static/console/formats.js), far below this.
const consoleHeapLimit = 256 << 20

// PageResponds checks that the page still runs script and that its heap
// is bounded: a page stuck expanding a value fails the first with the
// wait's deadline, one that expanded it fails the second.
func (p *ConsolePage) PageResponds(what string) {
	p.Tb.Helper()
	var two int
	p.Eval(`1 + 1`, &two)
	if two != 2 {
		p.Tb.Fatalf("after %s the page evaluates 1 + 1 as %d", what, two)
	}
	var heap int64
	p.Eval(`performance.memory.usedJSHeapSize`, &heap)
	p.Tb.Logf("after %s the page's heap holds %.1f MiB", what, float64(heap)/(1<<20))
	if heap > consoleHeapLimit {
		p.Tb.Errorf("after %s the page's heap holds %d MiB, more than %d MiB", what, heap>>20, consoleHeapLimit>>20)
	}
}

// queueRowsJS is an expression for the keys of the waiters (candidates)
// the page shows, in order.
const queueRowsJS = `[...document.querySelectorAll(".lock-pane .queue tbody tr")].map((tr) => tr.dataset.key)`

// WaitQueueShown waits until the page shows keys as the queue behind the holder, in order.
func (p *ConsolePage) WaitQueueShown(keys ...string) {
	p.Tb.Helper()
	want, _ := json.Marshal(keys)
	p.Wait(fmt.Sprintf("the queue %q", keys), `JSON.stringify(`+queueRowsJS+`) === `+Js(string(want)))
}

// WaitSince waits until the pane says the holder (leader) holds since
// revision rev, in the field called field.
func (p *ConsolePage) WaitSince(field string, rev int64) {
	p.Tb.Helper()
	sel := fmt.Sprintf(`.lock-pane dd[data-field=%q]`, field)
	p.Wait(fmt.Sprintf("%s: revision %d", field, rev), fmt.Sprintf(`document.querySelector(%s)?.textContent === %s`, Js(sel), Js(fmt.Sprintf("revision %d", rev))))
}

// moduleChecksTimeout bounds a run of module checks: seconds of work for
// the page on a quiet machine, which load stretches far past the
// console's usual ConsoleTimeout.
const moduleChecksTimeout = 3 * time.Minute

// RunModuleChecks evaluates script, which imports the console's modules
// and resolves to a list of failures, in a console page; each is an error.
func RunModuleChecks(t *testing.T, script string) {
	t.Helper()
	s := StartServer(t)
	p := OpenConsole(t, s, "#/leases", 1280, 800)
	ctx, cancel := context.WithTimeout(p.Ctx, moduleChecksTimeout)
	defer cancel()
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("running the module checks: %v", err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}
