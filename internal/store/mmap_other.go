//go:build !linux

package store

// populate is Linux's MAP_POPULATE; elsewhere pages are mapped as read.
const populate = 0
