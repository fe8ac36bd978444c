package manifest

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// checkFast is the property the fast converter must keep: whenever it
// accepts a document, the full converter accepts it too and produces the
// same bytes, and the header it reports is the one readHeader would read.
// It returns whether the fast path was taken.
func checkFast(t testing.TB, doc []byte) bool {
	t.Helper()
	got, h, ok := fastYAMLToJSON(doc)
	if !ok {
		return false
	}
	want, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		t.Fatalf("fast path accepted a document the full converter rejects (%v):\n%s", err, doc)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("fast path differs for\n%s\n got %s\nwant %s", doc, got, want)
	}
	if h.valid {
		rh, err := readHeader(got)
		if err != nil || rh.APIVersion != h.apiVersion || rh.Kind != h.kind || rh.Items != nil {
			t.Fatalf("fast header %+v, readHeader %+v (%v) for\n%s", h, rh, err, doc)
		}
	}
	return true
}

// TestFastYAMLCases pins the subset's edges: each document either takes the
// fast path with the full converter's result or is left to it.
func TestFastYAMLCases(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		fast bool // must take the fast path
	}{
		{"a: b\n", true},
		{"a: yes\nb: no\nc: on\nd: Off\ne: y\nf: N\ng: True\nh: FALSE\n", true},
		{"a: ~\nb: null\nc:\nd: Null\ne: ''\nf: \"\"\n", true},
		{"a: 0x10\nb: 010\nc: 0o17\nd: 0b101\ne: -0b11\nf: 1_000\ng: +5\nh: -0\ni: 00\n", true},
		{"a: 1e3\nb: 1.5\nc: .5\nd: -1.25e-7\ne: 1e21\nf: 3.\ng: 1E+2\nh: 0.000001\n", true},
		{"a: 9223372036854775807\nb: 9223372036854775808\nc: 18446744073709551616\nd: -9223372036854775809\n", true},
		{"a: .inf\n", false},
		{"a: -.Inf\n", false},
		{"a: .nan\n", false},
		{"a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: 2001-12-14 21:59:43.10\n", true},
		{"a: 500m\nb: 64Gi\nc: 7d9f\nd: 1.5Gi\ne: 0xZZ\nf: 1-2\n", true},
		{"a: <b>&c\nb: \"x\\ty\\\"z\\\\\"\nc: 'it''s'\nd: \"\\e\\0\\a\"\n", true},
		{"a: \"\\u00e9\"\n", false},
		{"a: \"x\\/y\"\n", false},
		{"yes: 1\n", false},
		{"1: a\n", false},
		{"~: a\n", false},
		{"<<: {}\n", false},
		{"a: <<\n", false},
		{"'yes': 1\n\"1\": 2\n", true},
		{"a: 1\na: 2\n", false},
		{"b: 1\na: 2\nc:\n  z: 1\n  x: 2\n", true},
		{"c:\n  z: 1\n  y: 2\n", false}, // the key y is the boolean true
		{"a:\n- 1\n- b: 2\n  c: 3\n-\n  - x\n  - y\n- - p\n  - q\nd: e\n", true},
		{"a:\n  - 1\n  -\n  - 3\n", true},
		{"- a\n- b\n", false}, // not an object: left to the full path
		{"a: b\n  c\n", false},
		{"a:\n  b\n  c\n", false},
		{"- a\n  b\n", false},
		{"a: b: c\n", false},
		{"a: - b\n", false},
		{"a: -\n", false},
		{"a: -b\n", true},
		{"a: b #c\n", false},
		{"a: b#c\n", true},
		{"# head\na: 1 \n\n  # indented comment\nb:   x  y  \n", true},
		{"a: {}\nb: []\nc: {x: 1}\nd: [1]\n", false},
		{"a: &x 1\nb: *x\n", false},
		{"a: !!str 1\n", false},
		{"a: |\n  x\n", false},
		{"a: >\n  x\n", false},
		{"a:\tb\n", false},
		{"a: b\r\n", false},
		{"a: é\n", false},
		{"  a: 1\n  b: 2\n", true},
		{"  a: 1\nb: 2\n", false},
		{"a:\n   b: 1\n  c: 2\n", false},
		{"a:\n  b: 1\n c: 2\n", false},
		{"a: 'x\n  y'\n", false},
		{"a: \"x\n", false},
		{"a:b\n", false},
		{"http://x: 1\n", false},
		{"a: http://x:80/y\n", true},
		{"\"a\":b\n", false},
		{"? a\n: b\n", false},
		{"a: ?x\n", false},
		{"a: :x\n", false},
		{"a: x:\n", false},
		{"a: [\n", false},
		{"a: ]\n", false},
		{"a: b,c]{}\n", true},
		{"a: 'b' c\n", false},
		{"...\n", false},
		{"%YAML 1.1\n", false},
		{"apiVersion: v1\nkind: Pod\nmetadata: {}\n", true},
		{"apiVersion: v1\nKind: Pod\nkind: Pod\n", true},
		{"apiVersion: 1\nkind: Pod\n", true},
		{"apiVersion: v1\nkind: List\nitems:\n- a: 1\n", true},
		{"apiVersion: v1\nkind: PodList\n", true},
		{"a: " + strings.Repeat("x", 2000) + "\n", true},
		{strings.Repeat("k", 1100) + ": 1\n", false},
	} {
		got := checkFast(t, []byte(tc.doc))
		if tc.fast && !got {
			t.Errorf("expected the fast path for\n%s", tc.doc)
		}
		if !tc.fast && got {
			t.Errorf("expected the full converter for\n%s", tc.doc)
		}
	}
}

// TestFastYAMLRepoManifests runs every YAML document in the repository
// (examples, scenario goldens' manifests, conformance cases, test data)
// through both converters.
func TestFastYAMLRepoManifests(t *testing.T) {
	docs := repoDocuments(t)
	fast := 0
	for _, d := range docs {
		if checkFast(t, d) {
			fast++
		}
	}
	t.Logf("%d of %d documents took the fast path", fast, len(docs))
	if fast*2 < len(docs) {
		t.Errorf("only %d of %d documents took the fast path", fast, len(docs))
	}
}

func repoDocuments(t testing.TB) [][]byte {
	var docs [][]byte
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		parsed, err := splitDocuments(data)
		if err != nil {
			return nil // bad-input goldens
		}
		for _, p := range parsed {
			if !p.json {
				docs = append(docs, p.data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestFastYAMLGenerated compares the converters on documents generated
// from the subset's building blocks with the scalars YAML 1.1 treats
// specially, odd keys, quoting and indentation variants, some of them
// deliberately invalid.
func TestFastYAMLGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 2026))
	fast := 0
	const n = 4000
	for i := 0; i < n; i++ {
		genTame = i%2 == 0
		if checkFast(t, generateYAML(r)) {
			fast++
		}
	}
	t.Logf("%d of %d generated documents took the fast path", fast, n)
	if fast < n/10 {
		t.Errorf("only %d of %d generated documents took the fast path", fast, n)
	}
}

// FuzzFastYAML: for any input the fast path accepts, it agrees with the
// full converter.
func FuzzFastYAML(f *testing.F) {
	for _, d := range repoDocuments(f) {
		f.Add(d)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		genTame = i%2 == 0
		f.Add(generateYAML(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data)
	})
}

var genScalars = []string{
	"a", "b c", "yes", "No", "on", "OFF", "y", "n", "true", "False", "null", "~", "Null", "NULL",
	"0", "-0", "+0", "00", "010", "019", "0x1F", "0X1f", "0o17", "0b101", "-0b11", "0b", "1_000", "_1", "1__0",
	"12", "-12", "+12", "1.5", ".5", "-.5", "5.", "1e3", "1E-3", "1e", "1.2.3", ".", "..", "-", "+", "1-2",
	"9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
	"-9223372036854775808", "-9223372036854775809", "123456789012345678", "1234567890123456789",
	".inf", "-.inf", "+.INF", ".nan", ".NaN", "1e400", ".1e400", "0.000001", "0.0000001", "1e20", "1e21",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10", "2001-13-45", "1999-1-1",
	"500m", "64Gi", "7d9f", "0xZZ", "abc", "a:b", "a: b", "a #b", "a#b", "http://x:1/y", "<<", "<a>&b",
	"{}", "[]", "{a: 1}", "[1]", "&a", "*a", "!x", "|", ">", "%x", "@x", "`x", "?x", ":x", "x:", "-x", "- x",
	"'q'", "\"q\"", "'", "\"", "a'b", "a\"b", "\\", "é", "\t", "a ", " a", "#",
}

var genKeys = []string{
	"a", "b", "c", "apiVersion", "kind", "metadata", "items", "Kind", "APIVERSION", "name", "namespace",
	"spec", "yes", "1", "1.5", "~", "null", "<<", "a b", "-a", "a:b", "a.b/c-d_e", "+x", "0x1", "2001-12-14",
	"'q'", "\"q\"", "'yes'", "\"1\"", "\"a\\tb\"", "'a''b'", "\"<&>\"", "x#y", "", ".inf",
}

var genDQEscapes = []string{"\\\\", "\\\"", "\\n", "\\t", "\\r", "\\0", "\\a", "\\b", "\\v", "\\f", "\\e", "\\ ", "\\/", "\\x41", "\\u00e9", "\\N", "\\q"}

func generateYAML(r *rand.Rand) []byte {
	var b strings.Builder
	if r.IntN(10) == 0 {
		b.WriteString("# comment\n")
	}
	base := 0
	if r.IntN(10) == 0 {
		base = 1 + r.IntN(3)
	}
	genMapping(r, &b, base, 0, false)
	if r.IntN(20) == 0 {
		b.WriteString("trailing: x\n")
	}
	return []byte(b.String())
}

func genIndent(r *rand.Rand) int {
	if r.IntN(8) == 0 {
		return 1 + r.IntN(4)
	}
	return 2
}

// genTame makes the generator pick unusual scalars and keys rarely, so that
// most documents stay in the fast subset and its output gets compared.
var genTame bool

func genScalar(r *rand.Rand) string {
	if genTame && r.IntN(10) > 0 {
		switch r.IntN(4) {
		case 0:
			return strconv.Itoa(r.IntN(100000) - 50000)
		case 1:
			return fmt.Sprintf("'w %d'", r.IntN(1000))
		case 2:
			return genScalars[r.IntN(80)]
		default:
			return fmt.Sprintf("w%d-%c", r.IntN(1000), 'a'+rune(r.IntN(26)))
		}
	}
	switch r.IntN(10) {
	case 0:
		return "'" + strings.ReplaceAll(genScalars[r.IntN(len(genScalars))], "'", "''") + "'"
	case 1:
		s := genScalars[r.IntN(len(genScalars))]
		s = strings.NewReplacer("\\", "\\\\", "\"", "\\\"").Replace(s)
		if r.IntN(2) == 0 {
			s += genDQEscapes[r.IntN(len(genDQEscapes))]
		}
		return "\"" + s + "\""
	case 2:
		return strconv.Itoa(r.IntN(100000) - 50000)
	case 3:
		return fmt.Sprintf("w%d-%c", r.IntN(1000), 'a'+rune(r.IntN(26)))
	default:
		return genScalars[r.IntN(len(genScalars))]
	}
}

func genKey(r *rand.Rand) string {
	if genTame && r.IntN(10) > 0 {
		return fmt.Sprintf("k%d", r.IntN(1000))
	}
	if r.IntN(3) == 0 {
		return fmt.Sprintf("k%d", r.IntN(6))
	}
	return genKeys[r.IntN(len(genKeys))]
}

// genMapping writes a block mapping at column col. inline says its first
// key continues a line already started ("- " of a sequence entry).
func genMapping(r *rand.Rand, b *strings.Builder, col, depth int, inline bool) {
	n := 1 + r.IntN(4)
	for i := 0; i < n; i++ {
		if i > 0 || !inline {
			b.WriteString(strings.Repeat(" ", col))
		}
		if r.IntN(40) == 0 && !genTame {
			b.WriteString(" ") // stray indentation
		}
		b.WriteString(genKey(r))
		b.WriteString(":")
		genValue(r, b, col, depth, true)
		if r.IntN(30) == 0 {
			b.WriteString("\n" + strings.Repeat(" ", r.IntN(4)) + "# c")
		}
		if r.IntN(30) == 0 {
			b.WriteString("\n")
		}
	}
}

func genValue(r *rand.Rand, b *strings.Builder, col, depth int, inMapping bool) {
	kind := r.IntN(10)
	if depth > 4 {
		kind = 0
	}
	switch {
	case kind < 5:
		if r.IntN(15) == 0 {
			b.WriteString("\n")
			return
		}
		b.WriteString(" " + genScalar(r))
		if r.IntN(20) == 0 {
			b.WriteString("  ")
		}
		if r.IntN(40) == 0 {
			b.WriteString("\n" + strings.Repeat(" ", col+2) + genScalar(r))
		}
		b.WriteString("\n")
	case kind < 7:
		b.WriteString("\n")
		genMapping(r, b, col+genIndent(r), depth+1, false)
	default:
		b.WriteString("\n")
		seqCol := col + genIndent(r)
		if inMapping && r.IntN(2) == 0 {
			seqCol = col
		}
		genSequence(r, b, seqCol, depth+1)
	}
}

func genSequence(r *rand.Rand, b *strings.Builder, col, depth int) {
	n := 1 + r.IntN(3)
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", col) + "-")
		switch r.IntN(5) {
		case 0, 1:
			gap := 1 + r.IntN(2)
			b.WriteString(strings.Repeat(" ", gap))
			genMapping(r, b, col+1+gap, depth+1, true)
		case 2:
			genValue(r, b, col, depth, false)
		case 3:
			if depth < 4 {
				b.WriteString(" ")
				genSequenceInline(r, b, col+2, depth+1)
			} else {
				b.WriteString(" x\n")
			}
		default:
			b.WriteString("\n")
			genMapping(r, b, col+genIndent(r), depth+1, false)
		}
	}
}

// genSequenceInline writes "- - a" style nested sequences.
func genSequenceInline(r *rand.Rand, b *strings.Builder, col, depth int) {
	n := 1 + r.IntN(2)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(strings.Repeat(" ", col))
		}
		b.WriteString("-")
		genValue(r, b, col, depth, false)
	}
}
