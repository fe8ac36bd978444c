package manifest

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// fastYAMLToJSON converts the plain block-style YAML that Kubernetes
// manifests are made of (block mappings and sequences, plain and quoted
// one-line scalars, {} and []) to exactly the JSON sigs.k8s.io/yaml's
// YAMLToJSONStrict produces for it: keys sorted, compact, YAML 1.1 type
// resolution of plain scalars as go-yaml v2 does it. Anything outside that
// subset (anchors, tags, block scalars, flow collections with content,
// multi-line scalars, comments after values, tabs, non-ASCII text,
// duplicate or non-string keys, odd indentation, …) makes it give up
// (ok=false) and the caller uses the full converter, which also produces
// the error message for invalid YAML. docs/manifest-decoding.md explains why the
// two exist; FuzzFastYAML checks they agree.
func fastYAMLToJSON(data []byte) (out []byte, h fastHeader, ok bool) {
	for _, c := range data {
		// Tabs, CR, control characters, DEL and non-ASCII: full converter.
		if c != '\n' && (c < 0x20 || c >= 0x7f) {
			return nil, h, false
		}
	}
	p := fastParsers.Get().(*fastParser)
	defer p.release()
	// The parser reads the document in place: data is not changed while it
	// runs, and the only strings that outlive it (apiVersion and kind) are
	// copied below; everything else is copied into out.
	p.src = unsafe.String(unsafe.SliceData(data), len(data))
	if !p.splitLines() || len(p.lines) == 0 {
		return nil, h, false
	}
	first := p.lines[0]
	root, next, ok := p.value(0, first.indent, first.text, 0)
	if !ok || next != len(p.lines) || p.nodes[root].kind != fnMap {
		return nil, h, false
	}
	out = make([]byte, 0, len(data))
	if out, ok = p.emit(out, root); !ok {
		return nil, h, false
	}
	h = p.header(root)
	// The parser's text is the document's; keep only copies.
	h.apiVersion, h.kind = strings.Clone(h.apiVersion), strings.Clone(h.kind)
	return out, h, true
}

// fastHeader is what decodeDocument needs to know before the typed decode,
// read off the parsed tree. valid is false when the document's header is
// anything but two plain strings (the full header reader then decides).
type fastHeader struct {
	valid            bool
	apiVersion, kind string
}

type fastLine struct {
	indent int
	text   string // from the indentation on, trailing spaces removed
}

const (
	fnMap = iota + 1
	fnSeq
	fnString  // text is the decoded string
	fnLiteral // text is the JSON literal (number, true, false, null)
)

type fastNode struct {
	kind uint8
	key  string // when the node is a mapping value
	text string
	// first child, last child and next sibling, -1 when none.
	first, last, next int32
}

type fastParser struct {
	src   string
	lines []fastLine
	nodes []fastNode
	stack []int32 // scratch for sorting a mapping's entries
}

// fastParsers keeps parsers' buffers from one document to the next: a
// scenario file is thousands of documents of the same shape.
var fastParsers = sync.Pool{New: func() any { return new(fastParser) }}

func (p *fastParser) release() {
	if cap(p.lines) > 1<<16 || cap(p.nodes) > 1<<16 {
		return // an unusually big document: let its buffers go
	}
	p.src = ""
	p.lines, p.nodes, p.stack = p.lines[:0], p.nodes[:0], p.stack[:0]
	fastParsers.Put(p)
}

// maxFastDepth bounds the recursion; deeper documents take the full path.
const maxFastDepth = 200

// splitLines keeps the lines with content: blank lines and whole-line
// comments mean nothing in block context.
func (p *fastParser) splitLines() bool {
	s := p.src
	for len(s) > 0 {
		var line string
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			line, s = s, ""
		}
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		text := strings.TrimRight(line[ind:], " ")
		if text == "" || text[0] == '#' {
			continue
		}
		if ind == 0 && (strings.HasPrefix(text, "...") || strings.HasPrefix(text, "---") || text[0] == '%') {
			return false // document markers and directives
		}
		p.lines = append(p.lines, fastLine{ind, text})
	}
	return true
}

func (p *fastParser) add(n fastNode) int32 {
	n.first, n.last, n.next = -1, -1, -1
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1)
}

func (p *fastParser) appendChild(parent, child int32) {
	if last := p.nodes[parent].last; last >= 0 {
		p.nodes[last].next = child
	} else {
		p.nodes[parent].first = child
	}
	p.nodes[parent].last = child
}

// isEntry reports whether text starts a block sequence entry.
func isEntry(text string) bool {
	return text[0] == '-' && (len(text) == 1 || text[1] == ' ')
}

// value parses the node that starts at column col of line li with text and
// returns it with the index of the first line after it.
func (p *fastParser) value(li, col int, text string, depth int) (int32, int, bool) {
	if depth > maxFastDepth {
		return 0, 0, false
	}
	if isEntry(text) {
		return p.sequence(li, col, text, depth)
	}
	if _, _, _, isKey, ok := p.key(text); !ok {
		return 0, 0, false
	} else if isKey {
		return p.mapping(li, col, text, depth)
	}
	n, ok := p.scalar(text)
	if !ok {
		return 0, 0, false
	}
	return p.add(n), li + 1, true
}

// nested parses what follows "key:" or "-" with nothing after it on the
// line: a more indented node, a compact sequence at col (mapping values
// only), or null.
func (p *fastParser) nested(li, col int, compactSeq bool, depth int) (int32, int, bool) {
	if li < len(p.lines) {
		l := p.lines[li]
		if l.indent > col {
			return p.value(li, l.indent, l.text, depth+1)
		}
		if compactSeq && l.indent == col && isEntry(l.text) {
			return p.sequence(li, col, l.text, depth+1)
		}
	}
	return p.add(fastNode{kind: fnLiteral, text: "null"}), li, true
}

func (p *fastParser) sequence(li, col int, text string, depth int) (int32, int, bool) {
	seq := p.add(fastNode{kind: fnSeq})
	for {
		rest := text[1:]
		restCol := col + 1
		for len(rest) > 0 && rest[0] == ' ' {
			rest, restCol = rest[1:], restCol+1
		}
		var child int32
		var ok bool
		if rest == "" {
			child, li, ok = p.nested(li+1, col, false, depth)
		} else {
			child, li, ok = p.value(li, restCol, rest, depth+1)
		}
		if !ok {
			return 0, 0, false
		}
		p.appendChild(seq, child)
		if li >= len(p.lines) {
			return seq, li, true
		}
		l := p.lines[li]
		if l.indent > col {
			return 0, 0, false
		}
		if l.indent < col || !isEntry(l.text) {
			return seq, li, true
		}
		text = l.text
	}
}

func (p *fastParser) mapping(li, col int, text string, depth int) (int32, int, bool) {
	m := p.add(fastNode{kind: fnMap})
	for {
		key, rest, restOff, isKey, ok := p.key(text)
		if !ok || !isKey {
			return 0, 0, false
		}
		_ = restOff
		var child int32
		if rest == "" {
			child, li, ok = p.nested(li+1, col, true, depth)
		} else {
			if isEntry(rest) {
				return 0, 0, false // "key: - x" is an error in YAML
			}
			if _, _, _, nestedKey, kok := p.key(rest); !kok || nestedKey {
				return 0, 0, false // "a: b: c" is an error in YAML
			}
			var n fastNode
			if n, ok = p.scalar(rest); ok {
				child, li = p.add(n), li+1
			}
		}
		if !ok {
			return 0, 0, false
		}
		p.nodes[child].key = key
		p.appendChild(m, child)
		if li >= len(p.lines) {
			return m, li, true
		}
		l := p.lines[li]
		if l.indent > col || (l.indent == col && isEntry(l.text)) {
			return 0, 0, false
		}
		if l.indent < col {
			return m, li, true
		}
		text = l.text
	}
}

// key reads "key:" at the start of text. isKey is false when text is not a
// mapping entry (it may still be a scalar); ok is false when the text is
// outside the subset. rest is what follows ": ", trimmed.
func (p *fastParser) key(text string) (key, rest string, restOff int, isKey, ok bool) {
	var end int
	switch c := text[0]; {
	case c == '"' || c == '\'':
		var n int
		if key, n, ok = unquote(text); !ok {
			return "", "", 0, false, false
		}
		end = n
	case isPlainKeyByte(c) && c != '-':
		end = 1
		for end < len(text) && isPlainKeyByte(text[end]) {
			end++
		}
		key = text[:end]
	default:
		// '-' (a scalar such as -1), indicators, anything else: not a key.
		return "", "", 0, false, true
	}
	if end == len(text) || text[end] != ':' || (end+1 < len(text) && text[end+1] != ' ') {
		return "", "", 0, false, true
	}
	if end > 1000 {
		return "", "", 0, false, false // YAML limits simple keys to 1024 characters
	}
	if text[0] != '"' && text[0] != '\'' {
		k, ok := resolvePlainKey(key)
		if !ok {
			return "", "", 0, false, false
		}
		key = k
	}
	rest = strings.TrimLeft(text[end+1:], " ")
	return key, rest, len(text) - len(rest), true, true
}

func isPlainKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '/' || c == '+'
}

// scalar reads a one-line scalar value filling the rest of the line.
func (p *fastParser) scalar(text string) (fastNode, bool) {
	switch text[0] {
	case '"', '\'':
		s, n, ok := unquote(text)
		if !ok || n != len(text) {
			return fastNode{}, false
		}
		return fastNode{kind: fnString, text: s}, true
	case '{', '[':
		if text == "{}" {
			return fastNode{kind: fnMap}, true
		}
		if text == "[]" {
			return fastNode{kind: fnSeq}, true
		}
		return fastNode{}, false
	case ',', ']', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`', '?', ':':
		return fastNode{}, false
	case '-':
		if len(text) == 1 || text[1] == ' ' {
			return fastNode{}, false
		}
	}
	if strings.Contains(text, ": ") || strings.Contains(text, " #") || text[len(text)-1] == ':' {
		return fastNode{}, false
	}
	return resolvePlain(text)
}

// unquote reads a single- or double-quoted scalar at the start of text and
// returns its value and length. Escapes beyond the common ones, and quotes
// that do not close on the line, are left to the full converter.
func unquote(text string) (string, int, bool) {
	q := text[0]
	var b []byte // only when the value differs from the text
	for i := 1; i < len(text); i++ {
		c := text[i]
		switch {
		case c == q && q == '\'' && i+1 < len(text) && text[i+1] == '\'':
			if b == nil {
				b = append([]byte(nil), text[1:i]...)
			}
			b = append(b, '\'')
			i++
		case c == q:
			if b == nil {
				return text[1:i], i + 1, true
			}
			return string(b), i + 1, true
		case c == '\\' && q == '"':
			if i+1 >= len(text) {
				return "", 0, false
			}
			var r byte
			switch text[i+1] {
			case '\\', '"', '\'':
				r = text[i+1]
			case 'n':
				r = '\n'
			case 't':
				r = '\t'
			case 'r':
				r = '\r'
			case '0':
				r = 0
			case 'a':
				r = 7
			case 'b':
				r = 8
			case 'v':
				r = 11
			case 'f':
				r = 12
			case 'e':
				r = 27
			case ' ':
				r = ' '
			default:
				return "", 0, false
			}
			if b == nil {
				b = append([]byte(nil), text[1:i]...)
			}
			b = append(b, r)
			i++
		default:
			if b != nil {
				b = append(b, c)
			}
		}
	}
	return "", 0, false
}

// resolvePlainKey resolves a plain mapping key; only keys that are strings
// stay on the fast path (sigs.k8s.io/yaml turns numbers and booleans into
// strings its own way).
func resolvePlainKey(s string) (string, bool) {
	n, ok := resolvePlain(s)
	if !ok || n.kind != fnString {
		return "", false
	}
	return n.text, true
}

// yamlFloatRE is the shape go-yaml v2 requires of a float written with
// digits (YAML 1.1 decimal floats).
var yamlFloatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// resolvePlain gives a plain scalar the type go-yaml v2 gives it when
// decoding into interface{} (YAML 1.1: yes/no/on/off are booleans, 0x10 and
// 010 are integers, timestamps stay strings), rendered as encoding/json
// would render that Go value. ok is false for values JSON cannot hold
// (.nan, .inf) and for the merge key "<<".
func resolvePlain(s string) (fastNode, bool) {
	str := fastNode{kind: fnString, text: s}
	switch c := s[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		if lit, isNum, ok := resolveNumber(s); isNum {
			return fastNode{kind: fnLiteral, text: lit}, ok
		}
		return str, true
	case c == '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return fastNode{}, false
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return floatLiteral(f)
		}
		return str, true
	case c == '~':
		if s == "~" {
			return fastNode{kind: fnLiteral, text: "null"}, true
		}
	case c == '<':
		if s == "<<" {
			return fastNode{}, false
		}
	case strings.IndexByte("yYnNtTfFoO", c) >= 0:
		switch s {
		case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
			return fastNode{kind: fnLiteral, text: "true"}, true
		case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
			return fastNode{kind: fnLiteral, text: "false"}, true
		case "null", "Null", "NULL":
			return fastNode{kind: fnLiteral, text: "null"}, true
		}
	}
	return str, true
}

// resolveNumber handles plain scalars starting with a sign or a digit.
// isNum reports that go-yaml reads s as a number; lit is its JSON.
func resolveNumber(s string) (lit string, isNum, ok bool) {
	switch s {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return "", true, false
	}
	// The common case: a canonical decimal integer is its own rendering.
	if canonicalInt(s) {
		return s, true, true
	}
	// Only a hexadecimal integer (0x…) has digits a-f; otherwise the only
	// letters a number can hold are the prefixes 0b and 0o and exponents.
	hex := strings.ContainsAny(s, "xX")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c == '+', c == '-', c == '.', c == '_',
			c == 'x', c == 'X', c == 'o', c == 'O', c == 'b', c == 'B', c == 'e', c == 'E':
		case hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
		default:
			return "", false, true // "500m", "64Gi", "7d9f", "2024-01-02T…": strings
		}
	}
	plain := strings.ReplaceAll(s, "_", "")
	if v, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return strconv.FormatInt(v, 10), true, true
	}
	if v, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return strconv.FormatUint(v, 10), true, true
	}
	if yamlFloatRE.MatchString(plain) {
		if f, err := strconv.ParseFloat(plain, 64); err == nil {
			n, ok := floatLiteral(f)
			return n.text, true, ok
		}
	}
	if digits, ok := strings.CutPrefix(plain, "0b"); ok {
		if v, err := strconv.ParseInt(digits, 2, 64); err == nil {
			return strconv.FormatInt(v, 10), true, true
		}
		if v, err := strconv.ParseUint(digits, 2, 64); err == nil {
			return strconv.FormatUint(v, 10), true, true
		}
	} else if digits, ok := strings.CutPrefix(plain, "-0b"); ok {
		if v, err := strconv.ParseInt("-"+digits, 2, 64); err == nil {
			return strconv.FormatInt(v, 10), true, true
		}
	}
	return "", false, true
}

// canonicalInt reports whether s is an integer written the way
// strconv.FormatInt writes it, short enough not to overflow.
func canonicalInt(s string) bool {
	d := s
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || (d[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// floatLiteral renders f as encoding/json does; NaN and infinities have no
// JSON form.
func floatLiteral(f float64) (fastNode, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fastNode{}, false
	}
	b, err := json.Marshal(f)
	if err != nil {
		return fastNode{}, false
	}
	return fastNode{kind: fnLiteral, text: string(b)}, true
}

// emit writes node i as json.Marshal writes the map[string]any /
// []any / scalar tree sigs.k8s.io/yaml builds: keys sorted bytewise.
// Duplicate keys (a strict-mode error) make it give up.
func (p *fastParser) emit(out []byte, i int32) ([]byte, bool) {
	n := &p.nodes[i]
	switch n.kind {
	case fnLiteral:
		return append(out, n.text...), true
	case fnString:
		return appendJSONString(out, n.text), true
	case fnSeq:
		out = append(out, '[')
		for c, first := n.first, true; c >= 0; c, first = p.nodes[c].next, false {
			if !first {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = p.emit(out, c); !ok {
				return nil, false
			}
		}
		return append(out, ']'), true
	}
	start := len(p.stack)
	for c := n.first; c >= 0; c = p.nodes[c].next {
		p.stack = append(p.stack, c)
	}
	entries := p.stack[start:]
	defer func() { p.stack = p.stack[:start] }()
	sorted := true
	for k := 1; k < len(entries); k++ {
		if p.nodes[entries[k-1]].key >= p.nodes[entries[k]].key {
			sorted = false
			break
		}
	}
	if !sorted {
		slices.SortFunc(entries, func(a, b int32) int { return strings.Compare(p.nodes[a].key, p.nodes[b].key) })
		for k := 1; k < len(entries); k++ {
			if p.nodes[entries[k-1]].key == p.nodes[entries[k]].key {
				return nil, false
			}
		}
	}
	out = append(out, '{')
	for k, c := range entries {
		if k > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, p.nodes[c].key)
		out = append(out, ':')
		var ok bool
		if out, ok = p.emit(out, c); !ok {
			return nil, false
		}
	}
	return append(out, '}'), true
}

// appendJSONString writes s as encoding/json does (HTML-safe escaping).
func appendJSONString(out []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(out, b...)
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}

// header reads apiVersion and kind when they are plain strings and no other
// top-level key could stand for them (encoding/json matches struct fields
// case-insensitively) and the document is not a List.
func (p *fastParser) header(root int32) fastHeader {
	var h fastHeader
	for c := p.nodes[root].first; c >= 0; c = p.nodes[c].next {
		n := &p.nodes[c]
		switch n.key {
		case "apiVersion":
			if n.kind != fnString {
				return fastHeader{}
			}
			h.apiVersion = n.text
		case "kind":
			if n.kind != fnString {
				return fastHeader{}
			}
			h.kind = n.text
		default:
			for _, f := range []string{"apiVersion", "kind", "metadata", "items"} {
				if strings.EqualFold(n.key, f) && n.key != f {
					return fastHeader{}
				}
			}
			if n.key == "items" {
				return fastHeader{}
			}
		}
	}
	if h.apiVersion == "" || h.kind == "" {
		return fastHeader{}
	}
	h.valid = true
	return h
}
