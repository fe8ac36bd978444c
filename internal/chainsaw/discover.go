package chainsaw

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// TestFileNames are the file names Chainsaw looks for in a test directory.
var TestFileNames = []string{"chainsaw-test.yaml", "chainsaw-test.yml"}

// Discover expands the command line's arguments: a file is itself; a
// directory stands for every Chainsaw test file under it (as `chainsaw
// test DIR` finds them), in path order.
func Discover(args []string) ([]string, error) {
	var out []string
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil || !st.IsDir() {
			out = append(out, arg) // RunFile reports a missing file
			continue
		}
		var found []string
		err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			for _, name := range TestFileNames {
				if !d.IsDir() && d.Name() == name {
					found = append(found, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no chainsaw-test.yaml under this directory", arg)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
