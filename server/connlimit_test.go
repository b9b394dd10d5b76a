package server

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLimitListener: past the per-client limit a client's connection is
// answered 503 and closed at once while another client still gets in;
// past the total nobody does; a closed connection frees its slot.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, ConnLimits{Total: 3, PerClient: 2, Plain: true})
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() { // ends when ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	held := func() net.Conn {
		select {
		case c := <-accepted:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no connection was accepted")
		}
		return nil
	}
	refused := func(c net.Conn) {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		if !strings.HasPrefix(string(b), "HTTP/1.1 503 ") {
			t.Fatalf("a connection over the limit read %q, want a 503", b)
		}
	}
	dial("127.0.0.1")
	dial("127.0.0.1")
	a1, _ := held(), held()
	refused(dial("127.0.0.1")) // the client's third
	dial("127.0.0.2")          // another client gets in
	held()
	refused(dial("127.0.0.3")) // the total is reached
	a1.Close()
	dial("127.0.0.3")
	held()
}
