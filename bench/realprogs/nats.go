package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

const (
	natsBatch    = 100 // SUB/UNSUB pairs per batch
	natsPerSec   = 1000
	natsNameSize = 1000 // bytes of padding in each subject
)

// setupNATS runs one nats-server with a cluster port (no peers needed: a cluster port is what
// makes the server track queue weights for routes) and its profiling port on loopback.
func setupNATS(work string) (*launch, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	client, cluster, prof := ports[0], ports[1], ports[2]
	addr := fmt.Sprintf("127.0.0.1:%d", client)
	args := []string{"-a", "127.0.0.1", "-p", fmt.Sprint(client),
		"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", cluster), "--cluster_name", "realprogs"}
	return &launch{
		args:    append(args[:len(args):len(args)], "--profile", fmt.Sprint(prof)),
		pprof:   localURL(prof, "/debug/pprof/"),
		noPprof: func() ([]string, string) { return args, addr },
		load: func(ctx context.Context) string {
			n, err := natsQueueChurn(ctx, addr, natsPerSec)
			s := fmt.Sprintf("%d queue subscriptions made and removed", n)
			if err != nil {
				s += fmt.Sprintf(" (stopped: %v)", err)
			}
			return s
		},
	}, nil
}

// natsQueueChurn speaks the NATS client protocol to addr: it subscribes to a new subject in a
// new queue group and unsubscribes at once, perSec times a second, in batches closed by a PING
// so that it never runs ahead of the server. It returns how many pairs the server took.
func natsQueueChurn(ctx context.Context, addr string, perSec int) (int, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("read INFO: %w", err)
	}
	if !strings.HasPrefix(line, "INFO ") {
		return 0, fmt.Errorf("not a NATS server: %q", oneLine(line, 40))
	}
	fmt.Fprint(w, "CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"realprogs\"}\r\n")
	pad := strings.Repeat("x", natsNameSize)
	tick := time.NewTicker(time.Second * natsBatch / time.Duration(perSec))
	defer tick.Stop()
	done, sid := 0, 0
	for {
		select {
		case <-ctx.Done():
			return done, nil
		case <-tick.C:
		}
		for i := 0; i < natsBatch; i++ {
			sid++
			fmt.Fprintf(w, "SUB leak.%s.%d q%d.%s %d\r\nUNSUB %d\r\n", pad, sid, sid, pad[:natsNameSize/10], sid, sid)
		}
		fmt.Fprint(w, "PING\r\n")
		if err := w.Flush(); err != nil {
			return done, ctxErr(ctx, err)
		}
		if err := awaitPong(r, w); err != nil {
			return done, ctxErr(ctx, err)
		}
		done += natsBatch
	}
}

// awaitPong reads server lines until PONG, answering the server's own PINGs and failing on
// -ERR.
func awaitPong(r *bufio.Reader, w *bufio.Writer) error {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(line, "PONG"):
			return nil
		case strings.HasPrefix(line, "PING"):
			io.WriteString(w, "PONG\r\n")
			if err := w.Flush(); err != nil {
				return err
			}
		case strings.HasPrefix(line, "-ERR"):
			return fmt.Errorf("server: %s", strings.TrimSpace(line))
		}
	}
}

// ctxErr hides the error a cancelled context caused.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
