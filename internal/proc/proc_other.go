//go:build !linux

package proc

import "errors"

// Read cannot read a process without Linux's /proc.
func Read(pid int) (Process, error) { return Process{}, errors.ErrUnsupported }

// All cannot list processes without Linux's /proc.
func All() ([]Process, error) { return nil, errors.ErrUnsupported }
