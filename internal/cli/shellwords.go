package cli

import "fmt"

// SplitWords splits a command line as a POSIX shell would for the simple cases
// berth's scenario files and demo use: blanks separate words, single quotes
// are literal, double quotes allow \" and \\ escapes, a backslash outside
// quotes escapes the next character.
func SplitWords(line string) ([]string, error) {
	var words []string
	var cur []byte
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, string(cur))
				cur, inWord = cur[:0], false
			}
		case c == '\'':
			j := i + 1
			for j < len(line) && line[j] != '\'' {
				j++
			}
			if j == len(line) {
				return nil, fmt.Errorf("unterminated single quote in %q", line)
			}
			cur, inWord = append(cur, line[i+1:j]...), true
			i = j
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) && (line[j+1] == '"' || line[j+1] == '\\') {
					j++
				}
				cur = append(cur, line[j])
			}
			if j == len(line) {
				return nil, fmt.Errorf("unterminated double quote in %q", line)
			}
			inWord = true
			i = j
		case c == '\\' && i+1 < len(line):
			cur, inWord = append(cur, line[i+1]), true
			i++
		default:
			cur, inWord = append(cur, c), true
		}
	}
	if inWord {
		words = append(words, string(cur))
	}
	return words, nil
}
