package skyjo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// StopDeadline is how long a signal gives the session to close before the process exits at once (status 0).
const StopDeadline = 750 * time.Millisecond

// Exit codes of Main (docs/writing-a-bot.md): 0 the session ended (the referee closed it, a signal, the
// parent's death); 1 the referee refused the session or could not be reached; 2 bad usage.
const (
	ExitOK      = 0
	ExitRefused = 1
	ExitUsage   = 2
)

// ExitCode is Main's exit code for Run's error.
func ExitCode(err error) int {
	var usage *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &usage):
		return ExitUsage
	default:
		return ExitRefused
	}
}

// Main plays bot as Run does and exits the process with the documented exit code: the whole main of a bot.
//
//	func main() { skyjo.Main(myBot{}, skyjo.WithVersion("1.0")) }
func Main(bot Bot, options ...Option) {
	err := Run(bot, options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	os.Exit(ExitCode(err))
}

// Run plays bot on the referee at SKYJO_ADDR with the token SKYJO_TOKEN (or the options') until the session
// ends, like Client.Play, and ends cleanly (nil) on SIGTERM or SIGINT and when the process SKYJO_PARENT_PID
// names exits. If the session has not closed StopDeadline after that (a Decide that never returns), the
// process exits at once with status 0: a bot never outlives the signal that stops it.
func Run(bot Bot, options ...Option) error {
	client, err := NewClient(bot, options...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(why string) {
		client.log.Info(why + ": closing the session")
		cancel()
		time.AfterFunc(StopDeadline, func() {
			client.log.Warn(fmt.Sprintf("%s: the session did not close within %v; exiting now", why, StopDeadline))
			os.Exit(ExitOK)
		})
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)
	go func() {
		select {
		case sig := <-signals:
			stop(strings.ToUpper(unix.SignalName(sig.(syscall.Signal))))
		case <-ctx.Done():
		}
	}()
	if parent, err := strconv.Atoi(os.Getenv("SKYJO_PARENT_PID")); err == nil && parent > 1 {
		go func() {
			waitForExit(parent)
			client.log.Info("the parent process exited")
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM) // ends as on SIGTERM

		}()
	}
	err = client.Play(ctx)
	stats := client.Stats()
	client.log.Info(fmt.Sprintf("played %d games, %d decisions (%d decide errors, %d strikes)",
		stats.Games, stats.Decisions, stats.DecideErrors, stats.Strikes))
	return err
}

// waitForExit returns once pid is no longer an ancestor of this process (it exited, or we were re-parented):
// a pidfd says the moment it exits; without pidfds (an old kernel) the parent is checked every 0.2 s.
func waitForExit(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == nil {
		defer unix.Close(fd)
		if isAncestor(pid) { // checked after opening: it cannot have died unseen in between
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for {
				if _, err := unix.Poll(fds, -1); err != unix.EINTR {
					return
				}
			}
		}
		return
	}
	for isAncestor(pid) {
		time.Sleep(200 * time.Millisecond)
	}
}

// isAncestor reports whether pid is our parent, or its parent and so on (a bot started through a shell).
func isAncestor(pid int) bool {
	current := os.Getppid()
	for range 64 {
		if current == pid {
			return true
		}
		if current <= 1 {
			return false
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", current))
		if err != nil {
			return false
		}
		text := string(stat)
		fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
		if len(fields) < 2 {
			return false
		}
		if current, err = strconv.Atoi(fields[1]); err != nil {
			return false
		}
	}
	return false
}
