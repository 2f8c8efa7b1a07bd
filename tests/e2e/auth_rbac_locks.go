package e2e

// PathSegment escapes the slashes of a name for a path.
func PathSegment(name string) string {
	out := make([]byte, 0, len(name)+4)
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			out = append(out, "%2F"...)
			continue
		}
		out = append(out, name[i])
	}
	return string(out)
}
