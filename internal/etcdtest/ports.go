package etcdtest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// Members listen on ports below Linux's ephemeral range (32768-60999 by
// default). A port picked from the ephemeral range can be taken, between
// the check and etcd's bind, by any outgoing connection on the machine,
// etcd's own peer connections included; ports below it are taken only by
// an explicit bind, and restarting a member finds its ports still free.
const (
	portLow  = 20000
	portHigh = 32768
)

// freePorts returns n distinct loopback ports that were free a moment ago:
// all are held open together while picking, then closed.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			tb.Fatalf("no %d free loopback ports in [%d, %d)", n, portLow, portHigh)
		}
		p := portLow + rand.IntN(portHigh-portLow)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		defer l.Close()
		ports = append(ports, p)
	}
	return ports
}

// loopbackURL is the http URL of port on 127.0.0.1.
func loopbackURL(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
