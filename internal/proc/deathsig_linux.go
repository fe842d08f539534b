package proc

import (
	"os/exec"
	"syscall"
)

// EndWithParent has cmd's process get SIGKILL when the process that
// started it dies, as toolguard-stdio does only when it is killed with
// SIGKILL: the server ends as it would had the client killed it, instead
// of running on alone when it does not end with its input. (Linux sends
// it when the thread that started cmd ends; nothing in toolguard-stdio
// ends a thread of its own.)
func EndWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
