#!/usr/bin/env bash
# compare.sh measures httpkv beside etcd (the release internal/etcdtest
# pins) and a null HTTP server on this machine with `httpkv-bench`,
# loopback only, and prints the tables of docs/performance.md ("Beside
# etcd's gRPC API, its gateway and a null server"). Four targets, each
# case in the same run:
#
#   httpkv      httpkv's /v1 API
#   httpkv-stream  (watch runs only) httpkv with every watcher on one
#               stream of many watchers (/v1/watch/streams), one connection
#   etcd-grpc   etcd's gRPC API through clientv3, on one connection
#   etcd-gw     etcd's HTTP/JSON gateway (/v3/...)
#   null        `httpkv-bench null`: httpkv's routes with fixed answers,
#               nothing stored, the ceiling of an HTTP server here
#
#   bench/compare.sh [kv|watch|catchup|restart|all]
#
# kv: put, get, list and txn at each client count, with and without
# fsync. watch: fan-out to many watchers, flat out and at a fixed rate,
# with the memory per idle watcher. catchup: one watcher opened 100,000
# revisions behind, timed to its last event. restart: the time from
# starting httpkv, and etcd, on a million keys to their first healthy
# answer.
#
# Environment: DURATION (each KV run, default 5s), CLIENTS (the client
# counts of the KV runs, default "1 16 64"), WATCHERS (the watcher counts
# of the watch runs, default "1000 10000"), EVENTS (the events a flat-out
# watch run delivers in all, default 4000000), BEHIND (the revisions of
# the catch-up runs, default 100000), RESTART_KEYS (the keys of the
# restart runs, default 1000000), ROUNDS (restarts of each, default 3),
# PORT_BASE (the ports: null server at it, httpkv +10, etcd +20 and
# +30 for its peer; default 23770), OUT (where the raw reports go,
# default a new directory under /tmp), ETCD (the etcd binary, default the
# pinned release, built on first use). Every server it starts listens on
# 127.0.0.1 with its data in a temporary directory, and is stopped at the
# end.
set -euo pipefail

what=${1:-all}
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d /tmp/httpkv-compare.XXXXXX)
out=${OUT:-$work/out}
mkdir -p "$out"
duration=${DURATION:-5s}
clients_list=${CLIENTS:-1 16 64}
watchers_list=${WATCHERS:-1000 10000}
events=${EVENTS:-4000000}
behind=${BEHIND:-100000}
restart_keys=${RESTART_KEYS:-1000000}
rounds=${ROUNDS:-3}
etcd_bin=${ETCD:-$(go run ./internal/etcdtest/buildetcd)}
port=${PORT_BASE:-23770}
null_addr=127.0.0.1:$port
hk_addr=127.0.0.1:$((port + 10))
etcd_addr=127.0.0.1:$((port + 20))
peer_addr=127.0.0.1:$((port + 30))
for addr in $null_addr $hk_addr $etcd_addr $peer_addr; do
	# Another server there would answer in place of ours.
	if (exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}") 2>/dev/null; then
		echo "bench/compare.sh: $addr is in use: stop what listens there, or set PORT_BASE" >&2
		exit 1
	fi
done
targets="httpkv etcd-grpc etcd-gw null"
watch_targets="httpkv httpkv-stream etcd-grpc etcd-gw null"
hk_pid=
etcd_pid=
null_pid=

go build -o "$work/httpkv" ./cmd/httpkv
go build -o "$work/httpkv-bench" ./cmd/httpkv-bench
echo "etcd: $("$etcd_bin" --version | sed -n 1p)"

stop_servers() {
	local p
	for p in $hk_pid $etcd_pid $null_pid; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	hk_pid= etcd_pid= null_pid=
}
cleanup() {
	stop_servers
	rm -rf "$work/hk" "$work/etcd" "$work/httpkv" "$work/httpkv-bench"
}
trap cleanup EXIT


# start_httpkv [flags] and start_etcd [flags] start the server on its
# data directory as it is; start_servers fsync|nofsync starts a fresh
# httpkv, etcd and null server.
start_httpkv() {
	"$work/httpkv" --listen "$hk_addr" --data-dir "$work/hk" --log-level warn "$@" >>"$work/httpkv.log" 2>&1 &
	hk_pid=$!
}
start_etcd() {
	"$etcd_bin" --name bench --data-dir "$work/etcd" \
		--listen-client-urls "http://$etcd_addr" --advertise-client-urls "http://$etcd_addr" \
		--listen-peer-urls "http://$peer_addr" --initial-advertise-peer-urls "http://$peer_addr" \
		--initial-cluster "bench=http://$peer_addr" --log-level error "$@" >>"$work/etcd.log" 2>&1 &
	etcd_pid=$!
}
start_servers() {
	stop_servers
	rm -rf "$work/hk" "$work/etcd"
	local flag=()
	[ "$1" = nofsync ] && flag=(--unsafe-no-fsync)
	start_httpkv "${flag[@]}"
	start_etcd "${flag[@]}"
	"$work/httpkv-bench" null --listen "$null_addr" >"$work/null.log" 2>&1 &
	null_pid=$!
	wait_healthy "http://$hk_addr"
	wait_healthy "http://$etcd_addr"
	wait_healthy "http://$null_addr"
	alive
}

# alive fails unless the servers started last still run.
alive() {
	local p
	for p in $hk_pid $etcd_pid $null_pid; do
		kill -0 "$p" 2>/dev/null || { echo "bench/compare.sh: a server exited: see $work/*.log" >&2; return 1; }
	done
}

# run NAME TARGET [bench flags...] writes the report to $out/NAME.TARGET.txt.
run() {
	local name=$1 target=$2 kind url pid extra=
	shift 2
	case $target in
	httpkv) kind=httpkv url=http://$hk_addr pid=$hk_pid ;;
	httpkv-stream) kind=httpkv url=http://$hk_addr pid=$hk_pid extra=--watch-streams=1 ;;
	etcd-grpc) kind=etcd-grpc url=http://$etcd_addr pid=$etcd_pid ;;
	etcd-gw) kind=etcd url=http://$etcd_addr pid=$etcd_pid ;;
	null) kind=httpkv url=http://$null_addr pid=$null_pid ;;
	esac
	echo "# $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/$name.$target.txt"
	"$work/httpkv-bench" --kind "$kind" --target "$url" --server-pid "$pid" $extra "$@" >>"$out/$name.$target.txt" 2>&1 || true
}

# cpu FILE prints the server CPU per operation of a report.
cpu() { sed -n 's/^server CPU.*: \([0-9.]*\)us and .*/\1 µs/p' "$1"; }

kv_runs() {
	local mode workload clients name f t row
	for mode in nofsync fsync; do
		start_servers "$mode"
		for workload in put get range txn; do
			# Reads do not sync: they run once, without fsync.
			if [ "$mode" = fsync ] && { [ "$workload" = get ] || [ "$workload" = range ]; }; then
				continue
			fi
			for clients in $clients_list; do
				name=kv-$mode-$workload-$clients
				for t in $targets; do
					run "$name" "$t" --workload "$workload" --clients "$clients" --duration "$duration" \
						--prefix "$name/" --range-keys 1000
				done
			done
		done
	done
	stop_servers
	echo "Requests per second (server CPU per request):"
	echo
	echo "| workload | sync | clients | httpkv | etcd gRPC | etcd HTTP gateway | null HTTP | httpkv ÷ etcd gRPC | httpkv ÷ null | httpkv p50 / p99 | etcd gRPC p50 / p99 |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for workload in put get range txn; do
		for mode in nofsync fsync; do
			for clients in $clients_list; do
				f=$out/kv-$mode-$workload-$clients
				[ -f "$f.httpkv.txt" ] || continue
				row="| $workload | $([ $mode = fsync ] && echo fsync || echo no fsync) | $clients"
				for t in $targets; do
					row="$row | $(field "$f.$t.txt" "$workload" 5) ($(cpu "$f.$t.txt"))"
				done
				row="$row | $(ratio "$(field "$f.httpkv.txt" "$workload" 5)" "$(field "$f.etcd-grpc.txt" "$workload" 5)")"
				row="$row | $(ratio "$(field "$f.httpkv.txt" "$workload" 5)" "$(field "$f.null.txt" "$workload" 5)")"
				row="$row | $(field "$f.httpkv.txt" "$workload" 6) / $(field "$f.httpkv.txt" "$workload" 8)"
				row="$row | $(field "$f.etcd-grpc.txt" "$workload" 6) / $(field "$f.etcd-grpc.txt" "$workload" 8) |"
				echo "$row"
			done
		done
	done
}

watch_runs() {
	local watchers name t
	for watchers in $watchers_list; do
		# Flat out: 64 writers, a bounded number of puts; fresh servers,
		# so that the memory per idle watcher is measured from a clean
		# start.
		name=watch-flat-$watchers
		for t in $watch_targets; do
			start_servers nofsync
			run "$name" "$t" --workload watch --watchers "$watchers" --clients 64 \
				--requests $((events / watchers)) --prefix "$name/"
		done
		# Latency at a fixed rate: 10 puts/s at 1,000 watchers or fewer,
		# 0.5 puts/s above (5,000 events/s at 10,000 watchers), a rate
		# etcd's gateway keeps up with.
		name=watch-rate-$watchers
		for t in $watch_targets; do
			start_servers nofsync
			if [ "$watchers" -le 1000 ]; then
				run "$name" "$t" --workload watch --watchers "$watchers" --clients 1 --rate 10 --requests 100 --prefix "$name/"
			else
				run "$name" "$t" --workload watch --watchers "$watchers" --clients 1 --rate 0.5 --requests 10 --prefix "$name/"
			fi
		done
	done
	stop_servers
	echo "| watchers | run | target | events/s | not delivered | p50 | p99 | server CPU per event | server RSS per idle watcher |"
	echo "|---:|---|---|---:|---:|---:|---:|---:|---:|"
	for watchers in $watchers_list; do
		for run in flat rate; do
			for t in $watch_targets; do
				f=$out/watch-$run-$watchers.$t.txt
				[ -f "$f" ] || continue
				echo "| $watchers | $([ $run = flat ] && echo "flat out, 64 writers" || echo "fixed rate") | $t" \
					"| $(field "$f" deliver 5) | $(field "$f" deliver 3)" \
					"| $(field "$f" deliver 6) | $(field "$f" deliver 8)" \
					"| $(sed -n 's/^server CPU.*: \([0-9.]*us\) and .*/\1/p' "$f")" \
					"| $(sed -n 's/.*: \([0-9.]* KiB\) per watcher/\1/p' "$f") |"
			done
		done
	done
}

catchup_runs() {
	local t f
	for t in $watch_targets; do
		start_servers nofsync
		run catchup "$t" --workload catchup --requests "$behind" --clients 64 --prefix "catchup/" --drain-timeout 5m
	done
	stop_servers
	echo "One watcher opened $behind revisions behind, from its request to its last event:"
	echo
	echo "| target | catch-up | revisions/s | server CPU per event | ÷ null |"
	echo "|---|---:|---:|---:|---:|"
	for t in $watch_targets; do
		f=$out/catchup.$t.txt
		[ -f "$f" ] || continue
		echo "| $t | $(field "$f" catchup 4) | $(field "$f" catchup 5) | $(cpu "$f")" \
			"| $(ratio "$(seconds "$(field "$f" catchup 4)")" "$(seconds "$(field "$out/catchup.null.txt" catchup 4)")") |"
	done
}

# healthy_after URL prints the seconds until URL/health answers, polling
# every 10 ms, for 5 minutes at most.
healthy_after() {
	local start now
	start=$(date +%s.%N)
	for _ in $(seq 30000); do
		if curl -fsS "$1/health" >/dev/null 2>&1; then
			now=$(date +%s.%N)
			awk -v a="$start" -v b="$now" 'BEGIN { printf "%.2f", b - a }'
			return 0
		fi
		sleep 0.01
	done
	echo "$(basename "$0"): $1 did not become healthy" >&2
	return 1
}

# cpu_seconds PID prints the CPU time process PID has used, in seconds.
cpu_seconds() {
	awk -v tck="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / tck }' "/proc/$1/stat"
}

restart_runs() {
	local round hk et hk_cpu et_cpu
	# Both stores get the same keys, written without fsync for speed;
	# each restart then runs with the server's default durability.
	start_servers nofsync
	run restart-load httpkv --workload put --keys "$restart_keys" --requests "$restart_keys" --clients 64 --prefix "restart/"
	run restart-load etcd-grpc --workload put --keys "$restart_keys" --requests "$restart_keys" --clients 64 --prefix "restart/"
	# Wall time depends on the cores the machine has free; CPU time to
	# the first healthy answer much less.
	echo "| round | load | httpkv | etcd | httpkv ÷ etcd | httpkv CPU | etcd CPU | CPU ÷ |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|"
	for round in $(seq "$rounds"); do
		stop_servers
		start_httpkv
		hk=$(healthy_after "http://$hk_addr")
		alive
		hk_cpu=$(cpu_seconds "$hk_pid")
		stop_servers
		start_etcd
		et=$(healthy_after "http://$etcd_addr")
		alive
		et_cpu=$(cpu_seconds "$etcd_pid")
		echo "| $round | $(cut -d' ' -f1 /proc/loadavg) | $hk s | $et s | $(ratio "$hk" "$et") | $hk_cpu s | $et_cpu s | $(ratio "$hk_cpu" "$et_cpu") |"
	done
	stop_servers
	echo
	echo "data: httpkv $(du -sh "$work/hk" | cut -f1), etcd $(du -sh "$work/etcd" | cut -f1)"
}

case $what in
kv) kv_runs ;;
watch) watch_runs ;;
catchup) catchup_runs ;;
restart) restart_runs ;;
all) kv_runs; watch_runs; catchup_runs; restart_runs ;;
*) echo "usage: bench/compare.sh [kv|watch|catchup|restart|all]" >&2; exit 2 ;;
esac
echo
echo "raw reports: $out"
