#!/usr/bin/env bash
# summary.sh measures every row of the performance targets in one run and
# prints the table of docs/performance.md ("Summary"): it runs
#
#   bench/compare.sh kv      put, get, list and txn at 16, 64 and 256
#                            clients, with and without fsync
#   bench/compare.sh watch   SSE fan-out to 1,000 and 10,000 watchers
#   bench/gateway.sh kv      gets and lists through two gateways over a
#                            three-member etcd cluster, at 16 and 64
#                            clients each
#
# one after the other, keeps their own tables, and then reads the rows of
# the targets out of their raw reports: each with its figures (requests
# or events per second, and the server's CPU per request in brackets),
# the ratios the target names, the target, and whether it is met.
#
#   bench/summary.sh
#
# Environment: DURATION (each KV run of compare.sh, default 4s),
# GATEWAY_DURATION (each of gateway.sh, default 5s), WATCHERS (default
# "1000 10000"), EVENTS (see compare.sh), OUT (where the raw reports and
# the three scripts' tables go, default a new directory under /tmp),
# ETCD (the etcd binary, default the pinned release). The run takes
# about 15 minutes on two cores.
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/lib.sh
out=${OUT:-$(mktemp -d /tmp/httpkv-summary.XXXXXX)}
mkdir -p "$out"
duration=${DURATION:-4s}
gateway_duration=${GATEWAY_DURATION:-5s}
watchers_list=${WATCHERS:-1000 10000}
export ETCD=${ETCD:-$(go run ./internal/etcdtest/buildetcd)}

echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo -), load $(cut -d' ' -f1-3 /proc/loadavg)"
DURATION=$duration CLIENTS="16 64 256" OUT=$out/kv bench/compare.sh kv >"$out/kv.md"
echo "# kv done $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
WATCHERS="$watchers_list" OUT=$out/watch bench/compare.sh watch >"$out/watch.md"
echo "# watch done $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
DURATION=$gateway_duration CLIENTS="16 64" OUT=$out/gateway bench/gateway.sh kv >"$out/gateway.md"
echo "# gateway done $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# cpu FILE prints a report's server CPU per operation, in µs.
cpu() { sed -n 's/^server CPU.*: \([0-9.]*\)us and .*/\1/p' "$1"; }
# cell FILE OP prints "rate/s (cpu µs)" of a report.
cell() { echo "$(field "$1" "$2" 5)/s ($(cpu "$1") µs)"; }
# atmost A B LIMIT and atleast A B LIMIT print yes when A ÷ B is within
# LIMIT, no otherwise.
atmost() { awk -v a="$1" -v b="$2" -v l="$3" 'BEGIN { print (b > 0 && a / b <= l) ? "yes" : "no" }'; }
atleast() { awk -v a="$1" -v b="$2" -v l="$3" 'BEGIN { print (b > 0 && a / b >= l) ? "yes" : "no" }'; }
both() { [ "$1" = yes ] && [ "$2" = yes ] && echo yes || echo no; }

echo "| row | httpkv | etcd gRPC | etcd HTTP gateway | null | result | target | met |"
echo "|---|---:|---:|---:|---:|---|---|---|"
# kv_row LABEL FILE-PREFIX OP CPU-LIMIT RATE-LIMIT: CPU ÷ null's at most
# CPU-LIMIT and, unless RATE-LIMIT is -, throughput ÷ etcd gRPC's at
# least RATE-LIMIT.
kv_row() {
	local label=$1 f=$2 op=$3 cl=$4 rl=$5 hk grpc met target
	hk=$(field "$f.httpkv.txt" "$op" 5) grpc=$(field "$f.etcd-grpc.txt" "$op" 5)
	met=$(atmost "$(cpu "$f.httpkv.txt")" "$(cpu "$f.null.txt")" "$cl")
	target="≤ ${cl}× null's CPU"
	if [ "$rl" != - ]; then
		met=$(both "$met" "$(atleast "$hk" "$grpc" "$rl")")
		target="$target, ≥ ${rl}× etcd gRPC"
	fi
	echo "| $label | $(cell "$f.httpkv.txt" "$op") | $(cell "$f.etcd-grpc.txt" "$op") | $(cell "$f.etcd-gw.txt" "$op")" \
		"| $(cell "$f.null.txt" "$op")" \
		"| $(ratio "$(cpu "$f.httpkv.txt")" "$(cpu "$f.null.txt")") null's CPU; $(ratio "$hk" "$grpc") etcd gRPC" \
		"| $target | $met |"
}
kv_row "durable put, 64 clients" "$out/kv/kv-fsync-put-64" put 1.6 1.4
kv_row "durable put, 256 clients" "$out/kv/kv-fsync-put-256" put 1.6 1.4
kv_row "get, 64 clients" "$out/kv/kv-nofsync-get-64" get 1.25 -
kv_row "durable txn compare-and-swap, 64 clients" "$out/kv/kv-fsync-txn-64" txn 1.8 1.3
kv_row "list 1,000 keys, 16 clients" "$out/kv/kv-nofsync-range-16" range 3 -
for w in $watchers_list; do
	f=$out/watch/watch-flat-$w
	hk=$(field "$f.httpkv.txt" deliver 5) null=$(field "$f.null.txt" deliver 5)
	echo "| $w SSE watchers of one prefix, events/s flat out | $hk/s | $(field "$f.etcd-grpc.txt" deliver 5)/s (one stream)" \
		"| $(field "$f.etcd-gw.txt" deliver 5)/s | $null/s | $(ratio "$hk" "$null") null | ≥ 0.95× null | $(atleast "$hk" "$null" 0.95) |"
done
for op in get range; do
	f=$out/gateway/kv-$op-64
	pair=$(awk -v op="$op" '$1 == op { s += $5 } END { printf "%.0f", s }' "$f.gateways.0.txt" "$f.gateways.1.txt")
	grpc=$(field "$f.etcd-grpc.txt" "$op" 5)
	pcpu=$(cat "$f.gateways.0.txt" "$f.gateways.1.txt" "$f.gateways.ticks" | awk -v op="$op" -v hz="$(getconf CLK_TCK)" \
		'$1 == op { n += $2 } $1 == "etcd-ticks" { t = $2 } END { if (n > 0) printf "%.0f", t * 1e6 / hz / n }')
	gcpu=$(awk -v op="$op" -v hz="$(getconf CLK_TCK)" '$1 == op { n = $2 } $1 == "etcd-ticks" { t = $2 }
		END { if (n > 0) printf "%.0f", t * 1e6 / hz / n }' "$f.etcd-grpc.txt")
	echo "| gateway ${op/range/list}s over 3 etcd members, 2 gateways × 64 clients | $pair/s, etcd $pcpu µs a request" \
		"| $grpc/s, etcd $gcpu µs a request | $(field "$f.etcd-http.txt" "$op" 5)/s | |" \
		"$(ratio "$pair" "$grpc") etcd gRPC; $(ratio "$pcpu" "$gcpu") etcd's CPU | ≥ 2× etcd gRPC, etcd's CPU near zero" \
		"| $(atleast "$pair" "$grpc" 2) |"
done
echo
echo "tables of the three runs and raw reports: $out"
