// Package proc is about the commands toolguard-stdio and the checker run:
// OwnGroup starts one in a process group of its own, so that what it
// starts can be ended with it (SignalGroup, GroupAlive, End); Read, All
// and GroupRunning read processes as Linux's /proc shows them, so that the
// caller can wait for a group to be gone (a zombie waiting to be reaped
// counts as gone) and the tests can find what a session left running.
// Without /proc, Read and All return errors.ErrUnsupported.
package proc

// Process is a process as /proc/<pid>/stat shows it.
type Process struct {
	PID, PPID, PGID int    // the process, its parent, its process group
	State           byte   // R, S, D, T, Z (zombie), X (dead), ...
	Start           string // start time, clock ticks after boot: tells it from a later process given the same pid
}

// Exited reports whether p has ended: a zombie waiting for its parent (or
// init) to reap it, or dead.
func (p Process) Exited() bool { return p.State == 'Z' || p.State == 'X' }

// GroupRunning reports whether a process of group pgid has not exited; ok
// is false when /proc cannot be read.
func GroupRunning(pgid int) (running, ok bool) {
	ps, err := All()
	if err != nil {
		return false, false
	}
	for _, p := range ps {
		if p.PGID == pgid && !p.Exited() {
			return true, true
		}
	}
	return false, true
}
