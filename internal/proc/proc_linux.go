package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// Read returns the process pid. The error wraps fs.ErrNotExist when there
// is no such process.
func Read(pid int) (Process, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Process{}, err
	}
	return parseStat(pid, stat)
}

// parseStat reads a /proc/<pid>/stat line: "pid (comm) state ppid pgrp
// session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
// cutime cstime priority nice num_threads itrealvalue starttime ...",
// where comm may hold spaces and ')'.
func parseStat(pid int, stat []byte) (Process, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Process{}, errors.New("proc: no command name in " + strconv.Quote(string(stat)))
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 {
		return Process{}, errors.New("proc: too few fields in " + strconv.Quote(string(stat)))
	}
	p := Process{PID: pid, State: f[0][0], Start: string(f[19])}
	p.PPID, _ = strconv.Atoi(string(f[1]))
	p.PGID, _ = strconv.Atoi(string(f[2]))
	return p, nil
}

// All lists every process in /proc; one that ends while it reads is left
// out.
func All() ([]Process, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var ps []Process
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue // not a process
		}
		if p, err := Read(pid); err == nil {
			ps = append(ps, p)
		}
	}
	return ps, nil
}
