#!/usr/bin/env bash
# gateway.sh measures httpkv as a gateway to a three-member etcd cluster
# (--backend etcd) beside etcd's own gRPC API, with `httpkv-bench`, on
# loopback, and prints the tables of docs/performance.md ("Gateways over
# etcd"). In the same run, against the same cluster:
#
#   gateway     httpkv --backend etcd, its /v1 API
#   gateways    (watch only) two such gateways, the SSE watchers split
#               between them, the writer on the first
#   etcd-grpc   etcd's gRPC API through clientv3, on one connection
#   etcd-http   (KV only) etcd's own HTTP/JSON gateway (/v3/...), on the
#               same member
#
# and, for KV runs, the CPU the members used per operation; for
# watches, the most watches etcd held during the run (its
# etcd_debugging_mvcc_watcher_total, summed over the members): two per
# gateway (its keys' and its auth state's) whatever the number of SSE
# watchers, both gateways counted in every run (one idle but for the
# gateways runs); for etcd's API, one per watcher.
#
#   bench/gateway.sh [kv|watch|all]
#
# Environment: DURATION (each KV run, default 5s), CLIENTS (default "16"),
# WATCHERS (default "1 100 1000 10000"), OUT (where the raw reports go),
# ETCD (the etcd binary, default the pinned release). The members run
# with --unsafe-no-fsync: the runs compare the gateway with etcd's API on
# one cluster, not disks.
set -euo pipefail

what=${1:-all}
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d /tmp/httpkv-gateway.XXXXXX)
out=${OUT:-$work/out}
mkdir -p "$out"
duration=${DURATION:-5s}
clients_list=${CLIENTS:-16}
watchers_list=${WATCHERS:-1 100 1000 10000}
etcd_bin=${ETCD:-$(go run ./internal/etcdtest/buildetcd)}
gw_addr=127.0.0.1:23780
gw2_addr=127.0.0.1:23781
members=3
client_port() { echo $((23790 + $1)); }
peer_port() { echo $((23890 + $1)); }
pids=()
gw_pid=
gw2_pid=

go build -o "$work/httpkv" ./cmd/httpkv
go build -o "$work/httpkv-bench" ./cmd/httpkv-bench
echo "etcd: $("$etcd_bin" --version | sed -n 1p)"

stop_all() {
	local p
	for p in $gw_pid $gw2_pid "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	pids=() gw_pid= gw2_pid=
}
trap 'stop_all; rm -rf "$work/etcd" "$work/httpkv" "$work/httpkv-bench"' EXIT

endpoints() {
	local i eps=()
	for i in $(seq 0 $((members - 1))); do eps+=("http://127.0.0.1:$(client_port "$i")"); done
	(IFS=,; echo "${eps[*]}")
}

# start_all starts a fresh cluster and two gateways to it.
start_all() {
	stop_all
	rm -rf "$work/etcd"
	local i initial=()
	for i in $(seq 0 $((members - 1))); do initial+=("m$i=http://127.0.0.1:$(peer_port "$i")"); done
	for i in $(seq 0 $((members - 1))); do
		"$etcd_bin" --name "m$i" --data-dir "$work/etcd/m$i" \
			--listen-client-urls "http://127.0.0.1:$(client_port "$i")" --advertise-client-urls "http://127.0.0.1:$(client_port "$i")" \
			--listen-peer-urls "http://127.0.0.1:$(peer_port "$i")" --initial-advertise-peer-urls "http://127.0.0.1:$(peer_port "$i")" \
			--initial-cluster "$(IFS=,; echo "${initial[*]}")" --initial-cluster-token gateway-bench \
			--unsafe-no-fsync --log-level error >"$work/etcd-m$i.log" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 0 $((members - 1))); do wait_healthy "http://127.0.0.1:$(client_port "$i")"; done
	"$work/httpkv" --listen "$gw_addr" --backend etcd --etcd-endpoints "$(endpoints)" \
		--etcd-namespace /bench/ --log-level warn >"$work/gateway.log" 2>&1 &
	gw_pid=$!
	"$work/httpkv" --listen "$gw2_addr" --backend etcd --etcd-endpoints "$(endpoints)" \
		--etcd-namespace /bench/ --log-level warn >"$work/gateway2.log" 2>&1 &
	gw2_pid=$!
	wait_healthy "http://$gw_addr"
	wait_healthy "http://$gw2_addr"
}

# run NAME TARGET [bench flags...] writes the report to $out/NAME.TARGET.txt.
run() {
	local name=$1 target=$2 kind url pid
	shift 2
	case $target in
	gateway) kind=httpkv url=http://$gw_addr pid=$gw_pid ;;
	gateways) kind=httpkv url=http://$gw_addr,http://$gw2_addr pid=$gw_pid ;;
	etcd-grpc) kind=etcd-grpc url=http://127.0.0.1:$(client_port 0) pid=${pids[0]} ;;
	etcd-http) kind=etcd url=http://127.0.0.1:$(client_port 0) pid=${pids[0]} ;;
	esac
	echo "# $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/$name.$target.txt"
	local before
	before=$(etcd_ticks)
	"$work/httpkv-bench" --kind "$kind" --target "$url" --server-pid "$pid" "$@" >>"$out/$name.$target.txt" 2>&1 || true
	echo "etcd-ticks $(($(etcd_ticks) - before))" >>"$out/$name.$target.txt"
}

# run_pair NAME [bench flags...] loads both gateways at once, --clients
# each, into $out/NAME.gateways.{0,1}.txt; the members' CPU goes to
# $out/NAME.gateways.ticks.
run_pair() {
	local name=$1 before i p
	shift
	before=$(etcd_ticks)
	local addrs=("$gw_addr" "$gw2_addr") gpids=("$gw_pid" "$gw2_pid") loads=()
	for i in 0 1; do
		"$work/httpkv-bench" --kind httpkv --target "http://${addrs[$i]}" --server-pid "${gpids[$i]}" "$@" \
			>"$out/$name.gateways.$i.txt" 2>&1 &
		loads+=($!)
	done
	for p in "${loads[@]}"; do wait "$p" || true; done
	echo "etcd-ticks $(($(etcd_ticks) - before))" >"$out/$name.gateways.ticks"
}

# pair_rate FILE-PREFIX OP prints the two gateways' requests per second,
# summed; pair_cpu the members' CPU per operation of the pair.
pair_rate() { cat "$1.gateways.0.txt" "$1.gateways.1.txt" | awk -v op="$2" '$1 == op { s += $5 } END { printf "%.0f", s }'; }
pair_cpu() {
	cat "$1.gateways.0.txt" "$1.gateways.1.txt" "$1.gateways.ticks" | awk -v op="$2" -v hz="$(getconf CLK_TCK)" \
		'$1 == op { n += $2 } $1 == "etcd-ticks" { t = $2 } END { if (n > 0) printf "%.0f µs", t * 1e6 / hz / n; else print "-" }'
}

# etcd_ticks prints the CPU time the members have used, in clock ticks.
etcd_ticks() {
	local p n=0
	for p in "${pids[@]}"; do
		n=$((n + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$n"
}

# etcd_cpu FILE OP prints the members' CPU per operation of a report.
etcd_cpu() {
	awk -v op="$2" -v hz="$(getconf CLK_TCK)" '$1 == op { n = $2 } $1 == "etcd-ticks" { t = $2 }
		END { if (n > 0) printf "%.0f µs", t * 1e6 / hz / n; else print "-" }' "$1"
}

# etcd_watches prints the watches the cluster holds, summed over members.
etcd_watches() {
	local i n=0 v
	for i in $(seq 0 $((members - 1))); do
		v=$(curl -fs "http://127.0.0.1:$(client_port "$i")/metrics" | awk '$1 == "etcd_debugging_mvcc_watcher_total" { print int($2) }')
		n=$((n + ${v:-0}))
	done
	echo "$n"
}


kv_runs() {
	local workload clients name t
	start_all
	for workload in put get range txn; do
		for clients in $clients_list; do
			name=kv-$workload-$clients
			for t in gateway etcd-grpc etcd-http; do
				run "$name" "$t" --workload "$workload" --clients "$clients" --duration "$duration" --prefix "$name/"
			done
			case $workload in get | range)
				# Both gateways read what the first wrote.
				run_pair "$name" --workload "$workload" --clients "$clients" --duration "$duration" --prefix "$name/" ;;
			esac
		done
	done
	stop_all
	echo "| workload | clients | gateway req/s | etcd gRPC req/s | etcd HTTP gateway req/s | gateway ÷ etcd gRPC | gateway ÷ etcd HTTP | etcd CPU/op: gateway / gRPC | gateway p50 / p99 | etcd gRPC p50 / p99 | etcd HTTP p50 / p99 |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for workload in put get range txn; do
		for clients in $clients_list; do
			local f=$out/kv-$workload-$clients
			local gw grpc http
			gw=$(field "$f.gateway.txt" "$workload" 5) grpc=$(field "$f.etcd-grpc.txt" "$workload" 5) http=$(field "$f.etcd-http.txt" "$workload" 5)
			echo "| $workload | $clients | $gw | $grpc | $http | $(ratio "$gw" "$grpc") | $(ratio "$gw" "$http")" \
				"| $(etcd_cpu "$f.gateway.txt" "$workload") / $(etcd_cpu "$f.etcd-grpc.txt" "$workload")" \
				"| $(field "$f.gateway.txt" "$workload" 6) / $(field "$f.gateway.txt" "$workload" 8)" \
				"| $(field "$f.etcd-grpc.txt" "$workload" 6) / $(field "$f.etcd-grpc.txt" "$workload" 8)" \
				"| $(field "$f.etcd-http.txt" "$workload" 6) / $(field "$f.etcd-http.txt" "$workload" 8) |"
		done
	done
	echo
	echo "| workload | clients per gateway | two gateways req/s | etcd gRPC req/s | two gateways ÷ etcd gRPC | etcd CPU/op: two gateways / gRPC |"
	echo "|---|---:|---:|---:|---:|---:|"
	for workload in get range; do
		for clients in $clients_list; do
			local f=$out/kv-$workload-$clients pair
			pair=$(pair_rate "$f" "$workload")
			echo "| $workload | $clients | $pair | $(field "$f.etcd-grpc.txt" "$workload" 5) | $(ratio "$pair" "$(field "$f.etcd-grpc.txt" "$workload" 5)")" \
				"| $(pair_cpu "$f" "$workload") / $(etcd_cpu "$f.etcd-grpc.txt" "$workload") |"
		done
	done
}

watch_runs() {
	local watchers name t held
	for watchers in $watchers_list; do
		# 1 put/s for 10 s: every event fans out to every watcher; the
		# latency is commit to receipt.
		name=watch-$watchers
		for t in gateway gateways etcd-grpc; do
			start_all
			# The most watches etcd held during the run, sampled each
			# second (the gateway, idle beside an etcd-grpc run, holds
			# its two).
			(
				most=0
				while :; do
					n=$(etcd_watches)
					[ "$n" -gt "$most" ] && most=$n && echo "$most" >"$out/$name.$t.etcd-watches"
					sleep 1
				done
			) &
			local sampler=$!
			run "$name" "$t" --workload watch --watchers "$watchers" --clients 1 --rate 1 --requests 10 --prefix "$name/"
			kill "$sampler" 2>/dev/null || true
			wait "$sampler" 2>/dev/null || true
		done
	done
	stop_all
	echo "| watchers | target | load average | watches etcd held (most) | events/s | not delivered | p50 | p99 | p99 ÷ etcd gRPC |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
	for watchers in $watchers_list; do
		local base=$out/watch-$watchers.etcd-grpc.txt
		for t in gateway gateways etcd-grpc; do
			local f=$out/watch-$watchers.$t.txt
			held=$(cat "$out/watch-$watchers.$t.etcd-watches" 2>/dev/null || echo -)
			echo "| $watchers | $t | $(awk 'NR == 1 { print $4 }' "$f") | $held" \
				"| $(field "$f" deliver 5) | $(field "$f" deliver 3)" \
				"| $(field "$f" deliver 6) | $(field "$f" deliver 8)" \
				"| $(ratio "$(seconds "$(field "$f" deliver 8)")" "$(seconds "$(field "$base" deliver 8)")") |"
		done
	done
}

case $what in
kv) kv_runs ;;
watch) watch_runs ;;
all) kv_runs; watch_runs ;;
*) echo "usage: bench/gateway.sh [kv|watch|all]" >&2; exit 2 ;;
esac
echo "raw reports: $out"
