# bench/lib.sh: what the measuring scripts (compare.sh, gateway.sh)
# share. Sourced, not run.

# wait_healthy URL [SECONDS] waits until URL/health answers, for SECONDS
# (default 20) at most.
wait_healthy() {
	local i
	for i in $(seq $((${2:-20} * 10))); do
		curl -fsS "$1/health" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "$(basename "$0"): $1 did not become healthy" >&2
	return 1
}

# field FILE OP COLUMN prints a column of an op's row of a report.
field() { awk -v op="$2" -v c="$3" '$1 == op { print $c }' "$1"; }
# ratio A B prints A ÷ B as 1.23x, or - when B is not positive.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
# seconds D prints a report's duration (0.412ms, 66.3ms, 2.16s) in
# seconds, for ratio.
seconds() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) print d / 1000; else if (d ~ /s$/) print d + 0; else print 0 }'; }
