package chainsaw

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Print writes the human-readable outcome of the files: one line per step,
// the failing step's message and diff indented under it, then a summary.
func Print(w io.Writer, files []FileResult) {
	var unread, tests, failedTests, steps, failedSteps int
	for _, f := range files {
		fmt.Fprintf(w, "%s\n", f.File)
		if f.Err != "" {
			fmt.Fprintf(w, "  ERROR %s\n", f.Err)
			unread++
			continue
		}
		for _, t := range f.Tests {
			tests++
			if t.Failed() {
				failedTests++
			}
			fmt.Fprintf(w, "  %s %s\n", verdict(t.Failed()), t.Name)
			if t.Err != "" {
				fmt.Fprintf(w, "    ERROR %s\n", t.Err)
			}
			for _, s := range t.Steps {
				steps++
				switch {
				case s.Skipped:
					fmt.Fprintf(w, "    SKIP %s\n", s.Name)
				case s.Failure != "":
					failedSteps++
					fmt.Fprintf(w, "    FAIL %s (virtual time %s)\n", s.Name, s.Virtual)
					fmt.Fprintf(w, "%s\n", indent(s.Failure, "      "))
				default:
					fmt.Fprintf(w, "    ok   %s (virtual time %s)\n", s.Name, s.Virtual)
				}
			}
		}
	}
	fmt.Fprintf(w, "%s: %d test(s), %d failed; %d step(s), %d failed", verdict(failedTests+unread > 0), tests, failedTests, steps, failedSteps)
	if unread > 0 {
		fmt.Fprintf(w, "; %d file(s) not read", unread)
	}
	fmt.Fprintln(w)
}

func verdict(failed bool) string {
	if failed {
		return "FAIL"
	}
	return "PASS"
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// JUnit XML: one testsuite per file, one testcase per step (classname is
// the test's name), the schema CI systems read.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the results as JUnit XML. Times are 0: berth's steps
// take virtual time, and wall-clock times would make the file differ run
// to run.
func WriteJUnit(w io.Writer, files []FileResult) error {
	all := junitSuites{}
	for _, f := range files {
		suite := junitSuite{Name: f.File, Time: "0"}
		if f.Err != "" {
			suite.Cases = append(suite.Cases, junitCase{Name: "parse", Classname: f.File, Time: "0",
				Error: &junitMessage{Message: firstLine(f.Err), Text: f.Err}})
			suite.Errors++
		}
		for _, t := range f.Tests {
			if t.Err != "" {
				suite.Cases = append(suite.Cases, junitCase{Name: "setup", Classname: t.Name, Time: "0",
					Error: &junitMessage{Message: firstLine(t.Err), Text: t.Err}})
				suite.Errors++
			}
			for _, s := range t.Steps {
				c := junitCase{Name: s.Name, Classname: t.Name, Time: "0"}
				switch {
				case s.Skipped:
					c.Skipped = &junitMessage{Message: "an earlier step failed"}
					suite.Skipped++
				case s.Failure != "":
					c.Failure = &junitMessage{Message: firstLine(s.Failure), Text: s.Failure}
					suite.Failures++
				}
				suite.Cases = append(suite.Cases, c)
			}
		}
		suite.Tests = len(suite.Cases)
		all.Tests += suite.Tests
		all.Failures += suite.Failures
		all.Errors += suite.Errors
		all.Skipped += suite.Skipped
		all.Suites = append(all.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
