package store

import "syscall"

// populate asks the kernel to map every page of the file when it is
// opened: one call instead of a page fault per 4 KiB read of a state read
// whole.
const populate = syscall.MAP_POPULATE
