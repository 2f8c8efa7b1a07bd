package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"key", "prefix", "from_key", "range_end", "limit", "revision", "put", "listen", "get", "watch"}
	for _, tt := range []struct{ name, want string }{
		{"prefx", "prefix"}, {"fromkey", "from_key"}, {"rangeend", "range_end"}, {"revison", "revision"},
		{"putt", "put"}, {"ky", "key"}, {"lisen", "listen"}, {"rev", "revision"},
		{"gte", "get"}, {"wacth", "watch"}, {"lsiten", "listen"},
		{"zebra", ""}, {"x", ""}, {"", ""},
	} {
		if got := Nearest(tt.name, known); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
