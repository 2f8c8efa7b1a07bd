package bench

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// printReport writes the rows as a table: count, errors, elapsed,
// throughput and latency percentiles.
func printReport(w io.Writer, rows []result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tcount\terrors\telapsed\tper sec\tp50\tp90\tp99\tmax\t")
	for _, r := range rows {
		rate := 0.0
		if r.elapsed > 0 {
			rate = float64(r.count) / r.elapsed.Seconds()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.op, r.count, r.errors,
			formatDuration(r.elapsed), strconv.FormatFloat(rate, 'f', 0, 64),
			formatDuration(r.hist.Percentile(50)), formatDuration(r.hist.Percentile(90)),
			formatDuration(r.hist.Percentile(99)), formatDuration(r.hist.Max()))
	}
	return tw.Flush()
}

// formatDuration prints d with three significant digits, in
// milliseconds below a second and in seconds above: 0.412ms, 4.05ms,
// 66.3ms, 152ms, 2.16s, 12.3s.
func formatDuration(d time.Duration) string {
	unit, v := "ms", float64(d)/float64(time.Millisecond)
	if d >= time.Second {
		unit, v = "s", d.Seconds()
	}
	prec := 0
	switch {
	case v < 1:
		prec = 3
	case v < 10:
		prec = 2
	case v < 100:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + unit
}
