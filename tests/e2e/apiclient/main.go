// apiclient calls jobguard the way kube-apiserver calls a webhook: Go's TLS stack trusting only
// the caBundle, ServerName = the service DNS name, HTTP/1.1 with keep-alive, and
// POST /validate?timeout=10s with Content-Type application/json.
//
//	apiclient -addr 127.0.0.1:9443 -server-name jobguard.default.svc -cacert ca.crt \
//	          [-cert c.crt -key c.key] [-repeat N] [-interval 100ms] [-stop-on-close] FILE...
//
// One line per request:
//
//	file=NAME status=200 allowed=true uid=U code=C causes=f1|f2 reused=true close=false tls=1.3
//
// and `error file=NAME err=...` for a transport failure (then the exit status is 1).
// Build: GO111MODULE=off go build -o apiclient .
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type review struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Response   *struct {
		UID     string `json:"uid"`
		Allowed bool   `json:"allowed"`
		Status  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Details *struct {
				Causes []struct {
					Field string `json:"field"`
				} `json:"causes"`
			} `json:"details"`
		} `json:"status"`
		AuditAnnotations map[string]string `json:"auditAnnotations"`
		Warnings         []string          `json:"warnings"`
	} `json:"response"`
}

// compactJSON: v as compact JSON without HTML escaping (as jq -c prints it).
func compactJSON(v interface{}) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "error"
	}
	return strings.TrimSpace(b.String())
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9443", "address to dial, whatever the URL host")
	serverName := flag.String("server-name", "jobguard.default.svc", "service DNS name (URL host, SNI, verified name)")
	path := flag.String("path", "/validate?timeout=10s", "request path")
	caFile := flag.String("cacert", "", "caBundle PEM (the only trusted roots)")
	certFile := flag.String("cert", "", "client certificate PEM (mTLS)")
	keyFile := flag.String("key", "", "client key PEM (mTLS)")
	repeat := flag.Int("repeat", 1, "times to post the whole file list")
	interval := flag.Duration("interval", 0, "pause between requests")
	stopOnClose := flag.Bool("stop-on-close", false, "stop after a response carrying Connection: close")
	flag.Parse()
	if *caFile == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: apiclient -cacert ca.crt [flags] FILE...")
		os.Exit(2)
	}
	pem, err := os.ReadFile(*caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fmt.Fprintln(os.Stderr, "no certificate in", *caFile)
		os.Exit(2)
	}
	tc := &tls.Config{RootCAs: roots, ServerName: *serverName, NextProtos: []string{"http/1.1"}}
	if *certFile != "" {
		c, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		TLSClientConfig: tc,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, *addr)
		},
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1 only
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	url := "https://" + *serverName + ":" + portOf(*addr) + *path

	failed := 0
	for i := 0; i < *repeat; i++ {
		for _, f := range flag.Args() {
			body, err := os.ReadFile(f)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			closed, ok := post(client, url, f, body)
			if !ok {
				failed++
			}
			if *stopOnClose && closed {
				os.Exit(exitCode(failed))
			}
			if *interval > 0 {
				time.Sleep(*interval)
			}
		}
	}
	os.Exit(exitCode(failed))
}

func exitCode(failed int) int {
	if failed > 0 {
		return 1
	}
	return 0
}

func portOf(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "443"
	}
	return p
}

func post(client *http.Client, url, file string, body []byte) (closed bool, ok bool) {
	name := filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
	reused := false
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		fmt.Printf("error file=%s err=%q\n", name, err.Error())
		return false, false
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Printf("error file=%s err=%q\n", name, err.Error())
		return false, false
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Printf("error file=%s err=%q\n", name, err.Error())
		return resp.Close, false
	}
	var rv review
	if err := json.Unmarshal(data, &rv); err != nil || rv.Response == nil {
		fmt.Printf("error file=%s status=%d err=\"response is not an AdmissionReview\"\n", name, resp.StatusCode)
		return resp.Close, false
	}
	code := 0
	causes := []string{}
	if s := rv.Response.Status; s != nil {
		code = s.Code
		if s.Details != nil {
			for _, c := range s.Details.Causes {
				causes = append(causes, c.Field)
			}
		}
	}
	tlsv := "?"
	if resp.TLS != nil {
		switch resp.TLS.Version {
		case tls.VersionTLS12:
			tlsv = "1.2"
		case tls.VersionTLS13:
			tlsv = "1.3"
		}
	}
	fmt.Printf("file=%s status=%d api=%s allowed=%t uid=%s code=%d causes=%s reused=%t close=%t proto=%s tls=%s annotations=%s warnings=%s\n",
		name, resp.StatusCode, rv.APIVersion, rv.Response.Allowed, rv.Response.UID, code,
		strings.Join(causes, "|"), reused, resp.Close, resp.Proto, tlsv,
		compactJSON(rv.Response.AuditAnnotations), compactJSON(rv.Response.Warnings))
	return resp.Close, resp.StatusCode == http.StatusOK
}
