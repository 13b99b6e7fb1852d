package diagnose

import (
	"strings"

	"github.com/memdoctor/memdoctor/facts"
)

// waitState names what a group waits on, from its state or its runtime frames.
func waitState(g facts.StackGroup) string {
	if g.State != "" {
		return g.State
	}
	for _, fr := range g.Stack {
		switch {
		case strings.HasPrefix(fr, "runtime.chansend"):
			return "chan send"
		case strings.HasPrefix(fr, "runtime.chanrecv"):
			return "chan receive"
		case fr == "runtime.selectgo" || fr == "runtime.block":
			return "select"
		case strings.Contains(fr, "runtime_pollWait") || fr == "runtime.netpollblock":
			return "IO wait"
		case strings.Contains(fr, "SemacquireMutex") || strings.Contains(fr, "(*Mutex).Lock") || strings.Contains(fr, "(*RWMutex)"):
			return "mutex wait"
		case strings.Contains(fr, "(*WaitGroup).Wait") || strings.Contains(fr, "runtime_Semacquire"):
			return "semaphore wait"
		case strings.Contains(fr, "(*Cond).Wait"):
			return "sync.Cond wait"
		case fr == "time.Sleep":
			return "sleep"
		}
	}
	return "a wait"
}

// goroutineAdvice is specific advice for the largest growing group.
func goroutineAdvice(g facts.StackGroup) []string {
	stack := strings.Join(g.Stack, " ")
	switch state := waitState(g); {
	case strings.Contains(stack, "net/http.(*persistConn)"):
		return []string{"These are HTTP client connections kept alive by response bodies nobody closed or drained: close every resp.Body (also on error paths and when the status is not 200)."}
	case state == "chan send":
		return []string{"The senders block because nobody receives any more (the receiver returned on a timeout or error): make the channel buffered with room for every sender, or select on ctx.Done() when sending."}
	case state == "chan receive":
		return []string{"The receivers wait for a value or a close that never comes: close the channel when the producer is done, or select on ctx.Done()."}
	case state == "IO wait":
		return []string{"The goroutines wait on network reads that never end: set deadlines (SetReadDeadline, http.Client.Timeout, server ReadTimeout/IdleTimeout)."}
	}
	return nil
}
