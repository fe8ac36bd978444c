package report_test

import (
	"strconv"
	"time"
)

func timeParse(s string) (time.Duration, error) { return time.ParseDuration(s) }

func itoa(n int) string { return strconv.Itoa(n) }
