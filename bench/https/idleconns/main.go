// idleconns opens N TLS connections to the webhook port, optionally sends one POST on each (so the
// server has served a request on every connection, as on a kube-apiserver keep-alive pool), then
// keeps them all open and idle. It prints "READY <open> <failed>" once they are all set up, holds
// them until -hold elapses or stdin is closed, then closes them and exits.
//
// Build (no module needed): GO111MODULE=off go build -o idleconns ./bench/https/idleconns
package main

import (
	"bufio"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9443", "host:port of the TLS listener")
	sni := flag.String("sni", "jobguard.default.svc", "TLS server name (GnuTLS refuses an IP as SNI)")
	n := flag.Int("n", 1000, "connections to open")
	post := flag.String("post", "", "AdmissionReview file to POST once on each connection (empty: handshake only)")
	hold := flag.Duration("hold", 30*time.Second, "how long to keep the connections open at most")
	par := flag.Int("parallel", 50, "connections being set up at the same time")
	flag.Parse()

	var body []byte
	if *post != "" {
		b, err := os.ReadFile(*post)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		body = b
	}
	cfg := &tls.Config{ServerName: *sni, InsecureSkipVerify: true}
	conns := make([]*tls.Conn, *n)
	var mu sync.Mutex
	failed := 0
	var firstErr error
	sem := make(chan struct{}, *par)
	var wg sync.WaitGroup
	for i := 0; i < *n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := setup(*addr, cfg, body)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			conns[i] = c
		}(i)
	}
	wg.Wait()
	fmt.Printf("READY %d %d\n", *n-failed, failed)
	if firstErr != nil {
		fmt.Fprintln(os.Stderr, "first error:", firstErr)
	}
	os.Stdout.Sync()

	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(*hold):
	}
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// setup dials, completes the handshake and, with a body, does one keep-alive POST /validate.
func setup(addr string, cfg *tls.Config, body []byte) (*tls.Conn, error) {
	raw, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	c := tls.Client(raw, cfg)
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := c.Handshake(); err != nil {
		c.Close()
		return nil, err
	}
	if body != nil {
		req := fmt.Sprintf("POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			cfg.ServerName, len(body))
		if _, err := c.Write(append([]byte(req), body...)); err != nil {
			c.Close()
			return nil, err
		}
		if err := readResponse(bufio.NewReader(c)); err != nil {
			c.Close()
			return nil, err
		}
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// readResponse reads one HTTP/1.1 response with a Content-Length body and checks it is a 200.
func readResponse(r *bufio.Reader) error {
	status, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		return fmt.Errorf("status %q", strings.TrimSpace(status))
	}
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if length < 0 {
		return fmt.Errorf("no Content-Length")
	}
	_, err = io.CopyN(io.Discard, r, int64(length))
	return err
}
