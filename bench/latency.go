package bench

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// latencyProxy forwards TCP connections to a target, delaying every byte
// by half a round trip in each direction: the store seen from another
// host, one zone or one region away. A chunk read at t is written at
// t+delay/2, in order, so the proxy adds latency without cutting
// bandwidth. Close stops it and waits for every goroutine it started.
type latencyProxy struct {
	ln     net.Listener
	target string
	oneWay time.Duration
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

// startLatencyProxy listens on a loopback port and forwards to target.
func startLatencyProxy(target string, rtt time.Duration) (*latencyProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &latencyProxy{ln: ln, target: target, oneWay: rtt / 2}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.accept()
	}()
	return p, nil
}

// Addr is the proxy's HOST:PORT.
func (p *latencyProxy) Addr() string { return p.ln.Addr().String() }

func (p *latencyProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			in.Close()
			out.Close()
			return
		}
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			p.pipe(out, in)
		}()
		go func() {
			defer p.wg.Done()
			p.pipe(in, out)
		}()
	}
}

// chunk is bytes read at one instant, due to be written at due.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst, each chunk oneWay after it was read; at the end
// of src it closes dst for writing (or whole, when it cannot half-close).
func (p *latencyProxy) pipe(dst, src net.Conn) {
	q := make(chan chunk, 4096)
	var rd sync.WaitGroup
	rd.Add(1)
	go func() {
		defer rd.Done()
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{b: buf[:n], due: now().Add(p.oneWay)}
			}
			if err != nil {
				return
			}
		}
	}()
	broken := false
	for c := range q {
		if broken {
			continue // drain, so the reader ends
		}
		if d := c.due.Sub(now()); d > 0 {
			pause(d)
		}
		if _, err := dst.Write(c.b); err != nil {
			broken = true
			src.Close()
		}
	}
	rd.Wait()
	if tc, ok := dst.(*net.TCPConn); ok && !broken {
		tc.CloseWrite()
	} else {
		dst.Close()
	}
}

// Close stops accepting, closes every connection and waits for the
// goroutines.
func (p *latencyProxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

var _ io.Closer = (*latencyProxy)(nil)
