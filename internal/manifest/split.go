package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// document is one YAML document or JSON value of a file.
type document struct {
	data []byte
	// start is the file line of data's first line; YAML parser line numbers
	// are relative to it.
	start int
	// line is the file line of the first line with content (not blank, not a
	// comment): what a user would call "where the document begins".
	line int
	// json is set for values of a JSON stream.
	json bool
}

// splitDocuments cuts a file into its non-empty documents. A file whose first
// non-blank byte is '{' or '[' is read as a stream of JSON values; anything
// else as YAML documents separated by "---" lines, which like kubectl's YAML
// reader may only be followed by spaces or a comment.
func splitDocuments(data []byte) ([]document, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return splitJSON(data)
	}
	// Documents are the runs of lines between separators: slices of data,
	// not copies.
	var docs []document
	all := data
	docStart, pos := 0, 0
	start, content := 1, 0
	flush := func(end int) {
		if content > 0 {
			docs = append(docs, document{data: all[docStart:end:end], start: start, line: content})
		}
	}
	lineNo := 0
	for pos < len(all) {
		lineNo++
		var line []byte
		if end := bytes.IndexByte(all[pos:], '\n'); end < 0 {
			line = all[pos:]
		} else {
			line = all[pos : pos+end+1]
		}
		lineStart := pos
		pos += len(line)
		if bytes.HasPrefix(line, []byte("---")) {
			rest := bytes.TrimSpace(line[3:])
			if len(rest) == 0 || rest[0] == '#' {
				flush(lineStart)
				docStart, start, content = pos, lineNo+1, 0
				continue
			}
			return nil, fmt.Errorf("line %d: invalid Yaml document separator: %s", lineNo, rest)
		}
		if content == 0 {
			t := bytes.TrimSpace(line)
			if len(t) > 0 && t[0] != '#' && string(t) != "..." {
				content = lineNo
			}
		}
	}
	flush(len(all))
	return docs, nil
}

// splitJSON reads consecutive JSON values, as kubectl accepts for JSON input.
func splitJSON(data []byte) ([]document, error) {
	var docs []document
	pos := 0
	for {
		for pos < len(data) && strings.IndexByte(" \t\r\n", data[pos]) >= 0 {
			pos++
		}
		if pos < len(data) && bytes.HasPrefix(data[pos:], []byte("\ufeff")) {
			pos += len("\ufeff")
			continue
		}
		if pos >= len(data) {
			return docs, nil
		}
		line := 1 + bytes.Count(data[:pos], []byte("\n"))
		dec := json.NewDecoder(bytes.NewReader(data[pos:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				at := pos + int(syn.Offset)
				if at > len(data) {
					at = len(data)
				}
				return nil, fmt.Errorf("line %d: invalid JSON: %v", 1+bytes.Count(data[:at], []byte("\n")), syn)
			}
			return nil, fmt.Errorf("line %d: invalid JSON: %v", line, err)
		}
		docs = append(docs, document{data: raw, start: line, line: line, json: true})
		pos += int(dec.InputOffset())
	}
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlError makes a YAML parser error one line and turns its document-relative
// line numbers into file line numbers.
func yamlError(err error, start int) error {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
	msg = yamlLineRE.ReplaceAllStringFunc(msg, func(m string) string {
		n, convErr := strconv.Atoi(m[len("line "):])
		if convErr != nil {
			return m
		}
		return fmt.Sprintf("line %d", n+start-1)
	})
	return errors.New(msg)
}
