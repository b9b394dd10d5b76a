package server

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// ConnLimits bound the connections a server holds: in all, so that a
// flood cannot use up the process's file descriptors, and per client
// address, so that one client cannot take every slot and the health
// probes of others keep being answered.
type ConnLimits struct {
	// Total is the most connections held at once (0: no bound).
	Total int
	// PerClient is the most one client IP address holds at once (0: no
	// bound).
	PerClient int
	// Plain says the connections carry plain HTTP: one over a limit is
	// answered 503 before it is closed. Under TLS it is only closed.
	Plain bool
	// Clock sets the deadline of that answer (nil: the real clock).
	Clock clock.Clock
}

// LimitListener returns ln with lim enforced: a connection over a limit
// is accepted and at once refused (a 503 with Retry-After for plain
// HTTP), so the client hears it at once instead of waiting in the
// kernel's queue, and the slot it would take stays free.
func LimitListener(ln net.Listener, lim ConnLimits) net.Listener {
	if lim.Clock == nil {
		lim.Clock = clock.Real{}
	}
	return &limitListener{Listener: ln, lim: lim, perIP: map[string]int{}}
}

type limitListener struct {
	net.Listener
	lim   ConnLimits
	mu    sync.Mutex
	total int
	perIP map[string]int
}

// refusal is what a connection over a limit is answered.
const refusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 52\r\n\r\ntoo many connections; try again in a second, please\n"

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c.RemoteAddr())
		if l.take(ip) {
			return &limitConn{Conn: c, release: func() { l.release(ip) }}, nil
		}
		if l.lim.Plain {
			_ = c.SetWriteDeadline(l.lim.Clock.Now().Add(time.Second))
			_, _ = c.Write([]byte(refusal))
		}
		_ = c.Close()
	}
}

func (l *limitListener) take(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.Total > 0 && l.total >= l.lim.Total || l.lim.PerClient > 0 && l.perIP[ip] >= l.lim.PerClient {
		return false
	}
	l.total++
	l.perIP[ip]++
	return true
}

func (l *limitListener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// clientIP is the IP of a remote address (the address itself when it has
// no port).
func clientIP(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitConn gives its slot back once, when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
