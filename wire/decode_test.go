package wire

import (
	"errors"
	"strings"
	"testing"
)

// TestDecode holds Decode to what it refuses, and how it says so.
func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    LeaseGrantRequest
		wantErr string // part of the message; "" for success
	}{
		{"object", `{"ttl":60,"id":7}`, LeaseGrantRequest{TTL: 60, ID: 7}, ""},
		{"whitespace around", " \t\r\n{\"ttl\":1}\n ", LeaseGrantRequest{TTL: 1}, ""},
		{"empty object", `{}`, LeaseGrantRequest{}, ""},
		{"empty", ``, LeaseGrantRequest{}, "empty"},
		{"only whitespace", "  \n", LeaseGrantRequest{}, "empty"},
		{"syntax", `{"ttl":}`, LeaseGrantRequest{}, "malformed JSON at byte"},
		{"truncated", `{"ttl":1`, LeaseGrantRequest{}, "malformed JSON"},
		{"unknown field", `{"ttl":1,"tll":2}`, LeaseGrantRequest{}, "unknown field"},
		{"string for number", `{"ttl":"60"}`, LeaseGrantRequest{}, `field "ttl" must be int64`},
		{"fraction", `{"ttl":1.5}`, LeaseGrantRequest{}, `field "ttl" must be int64`},
		{"overflow", `{"id":9223372036854775808}`, LeaseGrantRequest{}, `field "id" must be int64`},
		{"array", `[1]`, LeaseGrantRequest{}, "must be a JSON object, not array"},
		{"number", `5`, LeaseGrantRequest{}, "must be a JSON object, not number"},
		{"null", `null`, LeaseGrantRequest{}, "must be a JSON object, not null"},
		{"null in whitespace", " null\n", LeaseGrantRequest{}, "must be a JSON object, not null"},
		{"trailing bracket", `{"ttl":1}]`, LeaseGrantRequest{}, "data after the object"},
		{"trailing brace", `{"ttl":1}}`, LeaseGrantRequest{}, "data after the object"},
		{"second object", `{"ttl":1}{"ttl":2}`, LeaseGrantRequest{}, "data after the object"},
		{"trailing comma", `{"ttl":1},`, LeaseGrantRequest{}, "data after the object"},
		{"trailing NUL", "{\"ttl\":1}\x00", LeaseGrantRequest{}, "data after the object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got LeaseGrantRequest
			err := Decode([]byte(tt.body), &got)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Errorf("Decode(%q) = %+v, %v; want %+v", tt.body, got, err, tt.want)
				}
				return
			}
			var we *Error
			if !errors.As(err, &we) || we.Code != "invalid_argument" || !strings.Contains(we.Message, tt.wantErr) {
				t.Errorf("Decode(%q) = %v, want invalid_argument mentioning %q", tt.body, err, tt.wantErr)
			}
		})
	}
}
