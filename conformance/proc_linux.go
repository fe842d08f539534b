package conformance

import (
	"bytes"
	"os"
	"strconv"
)

// onlyZombies reports whether every process of the group has exited and
// waits only for its parent to reap it. It reads /proc; where it cannot,
// it answers false.
func onlyZombies(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(string(f[2])); g != pgid {
			continue
		}
		if string(f[0]) != "Z" && string(f[0]) != "X" {
			return false
		}
	}
	return true
}
