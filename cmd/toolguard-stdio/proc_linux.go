package main

import (
	"bytes"
	"os"
	"strconv"
)

// groupRunning reports whether /proc lists a process of group pgid that
// is not a zombie; ok is false when /proc cannot be read.
func groupRunning(pgid int) (running, ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return false, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false, false
	}
	want := []byte(strconv.Itoa(pgid))
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 || !bytes.Equal(f[2], want) {
			continue
		}
		if f[0][0] != 'Z' && f[0][0] != 'X' {
			return true, true
		}
	}
	return false, true
}
