package embedded

import (
	"testing"

	"github.com/httpkv/httpkv/reconcile/reconciletest"
)

func TestRewriteConformance(t *testing.T) {
	reconciletest.Run(t, func(t *testing.T) reconciletest.Backend {
		return openBackend(t, t.TempDir(), Options{})
	})
}
