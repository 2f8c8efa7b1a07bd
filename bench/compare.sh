#!/usr/bin/env bash
# compare.sh measures httpkv beside etcd 3.4 on this machine with
# `httpkv bench`, loopback only, and prints the tables of
# docs/performance.md ("HTTP API", "Watch fan-out over SSE").
#
#   bench/compare.sh [kv|watch|all]
#
# Environment: DURATION (each KV run, default 5s), OUT (where the raw
# reports go, default a new directory under /tmp), ETCD (the etcd binary,
# default etcd on PATH). Every server it starts listens on 127.0.0.1 with
# its data in a temporary directory, and is stopped at the end.
set -euo pipefail

what=${1:-all}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/httpkv-compare.XXXXXX)
out=${OUT:-$work/out}
mkdir -p "$out"
duration=${DURATION:-5s}
etcd_bin=${ETCD:-etcd}
hk_addr=127.0.0.1:23780
etcd_addr=127.0.0.1:23790
peer_addr=127.0.0.1:23800
hk_pid=
etcd_pid=

go build -o "$work/httpkv" ./cmd/httpkv

stop_servers() {
	local p
	for p in $hk_pid $etcd_pid; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	hk_pid= etcd_pid=
}
cleanup() {
	stop_servers
	rm -rf "$work/hk" "$work/etcd" "$work/httpkv"
}
trap cleanup EXIT

wait_healthy() {
	local i
	for i in $(seq 100); do
		curl -fsS "$1/health" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "compare.sh: $1 did not become healthy" >&2
	return 1
}

# start_servers fsync|nofsync starts a fresh httpkv and a fresh etcd.
start_servers() {
	stop_servers
	rm -rf "$work/hk" "$work/etcd"
	local flag=
	[ "$1" = nofsync ] && flag=--unsafe-no-fsync
	"$work/httpkv" --listen "$hk_addr" --data-dir "$work/hk" --log-level warn $flag >"$work/httpkv.log" 2>&1 &
	hk_pid=$!
	"$etcd_bin" --name bench --data-dir "$work/etcd" \
		--listen-client-urls "http://$etcd_addr" --advertise-client-urls "http://$etcd_addr" \
		--listen-peer-urls "http://$peer_addr" --initial-advertise-peer-urls "http://$peer_addr" \
		--initial-cluster "bench=http://$peer_addr" --log-level error $flag >"$work/etcd.log" 2>&1 &
	etcd_pid=$!
	wait_healthy "http://$hk_addr"
	wait_healthy "http://$etcd_addr"
}

# run NAME KIND [bench flags...] writes the report to $out/NAME.KIND.txt.
run() {
	local name=$1 kind=$2 target=http://$hk_addr pid=$hk_pid
	shift 2
	if [ "$kind" = etcd ]; then
		target=http://$etcd_addr pid=$etcd_pid
	fi
	echo "# $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/$name.$kind.txt"
	"$work/httpkv" bench --kind "$kind" --target "$target" --server-pid "$pid" "$@" >>"$out/$name.$kind.txt" 2>&1 || true
}

# field FILE OP COLUMN prints a column of an op's row of a report.
field() { awk -v op="$2" -v c="$3" '$1 == op { print $c }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }

kv_runs() {
	local mode workload clients name f g
	for mode in nofsync fsync; do
		start_servers "$mode"
		for workload in put get range txn; do
			# Reads do not sync: they run once, without fsync.
			if [ "$mode" = fsync ] && { [ "$workload" = get ] || [ "$workload" = range ]; }; then
				continue
			fi
			for clients in 1 16 64; do
				name=kv-$mode-$workload-$clients
				for kind in httpkv etcd; do
					run "$name" "$kind" --workload "$workload" --clients "$clients" --duration "$duration" \
						--prefix "$name/" --range-keys 1000
				done
			done
		done
	done
	stop_servers
	echo "| workload | sync | clients | httpkv req/s | etcd req/s | ratio | httpkv p50 / p99 | etcd p50 / p99 |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	for workload in put get range txn; do
		for mode in nofsync fsync; do
			for clients in 1 16 64; do
				f=$out/kv-$mode-$workload-$clients.httpkv.txt
				g=$out/kv-$mode-$workload-$clients.etcd.txt
				[ -f "$f" ] || continue
				echo "| $workload | $([ $mode = fsync ] && echo fsync || echo no fsync) | $clients" \
					"| $(field "$f" "$workload" 5) | $(field "$g" "$workload" 5)" \
					"| $(ratio "$(field "$f" "$workload" 5)" "$(field "$g" "$workload" 5)")" \
					"| $(field "$f" "$workload" 6) / $(field "$f" "$workload" 8)" \
					"| $(field "$g" "$workload" 6) / $(field "$g" "$workload" 8) |"
			done
		done
	done
}

watch_runs() {
	local watchers name kind
	for watchers in 1000 10000; do
		# Flat out: 64 writers, a bounded number of puts; fresh servers,
		# so that the memory per idle watcher is measured from a clean
		# start.
		name=watch-flat-$watchers
		for kind in httpkv etcd; do
			start_servers nofsync
			run "$name" "$kind" --workload watch --watchers "$watchers" --clients 64 \
				--requests $((2000000 / watchers * 2)) --prefix "$name/"
		done
		# Latency at a rate etcd's gateway sustains: 10,000 events/s in all
		# at 1,000 watchers, 5,000 at 10,000.
		name=watch-rate-$watchers
		for kind in httpkv etcd; do
			start_servers nofsync
			if [ "$watchers" = 1000 ]; then
				run "$name" "$kind" --workload watch --watchers 1000 --clients 1 --rate 10 --requests 100 --prefix "$name/"
			else
				run "$name" "$kind" --workload watch --watchers 10000 --clients 1 --rate 0.5 --requests 10 --prefix "$name/"
			fi
		done
	done
	stop_servers
	echo "| watchers | run | server | events/s | not delivered | p50 | p99 | server CPU per event | server RSS per idle watcher |"
	echo "|---:|---|---|---:|---:|---:|---:|---:|---:|"
	for watchers in 1000 10000; do
		for run in flat rate; do
			for kind in httpkv etcd; do
				f=$out/watch-$run-$watchers.$kind.txt
				[ -f "$f" ] || continue
				echo "| $watchers | $([ $run = flat ] && echo "flat out, 64 writers" || echo "fixed rate") | $kind" \
					"| $(field "$f" deliver 5) | $(field "$f" deliver 3)" \
					"| $(field "$f" deliver 6) | $(field "$f" deliver 8)" \
					"| $(sed -n 's/^server CPU.*: \([0-9.]*us\) and .*/\1/p' "$f")" \
					"| $(sed -n 's/.*: \([0-9.]* KiB\) per watcher/\1/p' "$f") |"
			done
		done
	done
}

case $what in
kv) kv_runs ;;
watch) watch_runs ;;
all) kv_runs; watch_runs ;;
*) echo "usage: bench/compare.sh [kv|watch|all]" >&2; exit 2 ;;
esac
echo
echo "raw reports: $out"
