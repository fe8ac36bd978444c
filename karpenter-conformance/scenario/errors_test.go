package scenario

import "testing"

func TestCanonicalError(t *testing.T) {
	a := "host port taken; incompatible requirements, key team, team In [b] not in team In [a]; key arch, arch In [arm64] not in arch In [amd64]"
	b := "host port taken; incompatible requirements, key arch, arch In [arm64] not in arch In [amd64]; key team, team In [b] not in team In [a]"
	want := "host port taken; incompatible requirements, key arch, arch In [arm64] not in arch In [amd64]; key team, team In [b] not in team In [a]"
	for _, tc := range []struct{ in, want string }{
		{a, want},
		{b, want},
		// Only clause runs are reordered; the other parts keep their order.
		{"second; first", "second; first"},
		{"incompatible requirements, key z, x; other; key a, y", "incompatible requirements, key z, x; other; key a, y"},
		{"", ""},
	} {
		if got := CanonicalError(tc.in); got != tc.want {
			t.Errorf("CanonicalError(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
