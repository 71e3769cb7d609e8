package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// body is the article's response body, the default.
const body = "Hello World\n"

// wantHeaders are the headers every response must carry besides Date, exactly.
var wantHeaders = map[string]string{
	"Server":         "gophr",
	"Connection":     "keep-alive",
	"Content-Type":   "text/plain",
	"Content-Length": "12",
}

// startServer runs gofasthttp on a free port; it stops at test end. It returns the address.
func startServer(t *testing.T, cfg config) string {
	t.Helper()
	if cfg.bodyBytes == 0 {
		cfg.bodyBytes = len(body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var logBuf syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, &logBuf) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logBuf.String(), " ready\n") {
		if time.Now().After(deadline) {
			t.Fatalf("server not ready; log: %q", logBuf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	log := logBuf.String()
	if !regexp.MustCompile(`^gofasthttp: GOMAXPROCS=[1-9][0-9]* http=127\.0\.0\.1:[0-9]+ delay=\S+ body=[0-9]+ pid=[0-9]+ ready\n$`).MatchString(log) {
		t.Fatalf("log line %q", log)
	}
	return regexp.MustCompile(`http=(\S+)`).FindStringSubmatch(log)[1]
}

// headHeaderBlock sends HEAD / as curl -sI does and returns the response's header block.
func headHeaderBlock(t *testing.T, address string) string {
	t.Helper()
	conn, err := net.Dial("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	r := bufio.NewReader(conn)
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading headers: %v (so far %q)", err, b.String())
		}
		b.WriteString(line)
		if line == "\r\n" {
			return b.String()
		}
	}
}

func TestHeadHeaderBlockIs141BytesWithTheArticleHeaders(t *testing.T) {
	block := headHeaderBlock(t, startServer(t, config{}))
	if len(block) != 141 {
		t.Errorf("HEAD header block is %d bytes, want 141:\n%s", len(block), block)
	}
	if !strings.HasPrefix(block, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("status line: %q", block)
	}
	for k, v := range wantHeaders {
		if !strings.Contains(block, "\r\n"+k+": "+v+"\r\n") {
			t.Errorf("missing %s: %s in %q", k, v, block)
		}
	}
	if lines := strings.Count(block, "\r\n"); lines != 7 {
		t.Errorf("%d lines, want status, 5 headers and the blank line:\n%s", lines, block)
	}
}

func TestGetAnyPathKeepsTheConnection(t *testing.T) {
	address := startServer(t, config{})
	client := &http.Client{}
	for _, path := range []string{"/", "/some/where?q=1"} {
		resp, err := client.Get("http://" + address + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != body || resp.Close {
			t.Errorf("GET %s: %d %q close=%v", path, resp.StatusCode, b, resp.Close)
		}
	}
}

func TestBodyBytesAndDelay(t *testing.T) {
	address := startServer(t, config{bodyBytes: 4096, handlerDelay: 20 * time.Millisecond})
	block := headHeaderBlock(t, address)
	if len(block) != 143 || !strings.Contains(block, "\r\nContent-Length: 4096\r\n") {
		t.Errorf("HEAD header block with -body-bytes 4096 is %d bytes, want 143:\n%s", len(block), block)
	}
	start := time.Now()
	resp, err := http.Get("http://" + address + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("answered after %v, want at least the 20ms delay", waited)
	}
	if !bytes.Equal(b, makeBody(4096)) {
		t.Errorf("body of %d bytes is not makeBody(4096)", len(b))
	}
}

func TestMakeBody(t *testing.T) {
	for n, want := range map[int]string{1: "H", 12: body, 13: body + "H", 30: body + body + "Hello "} {
		if got := string(makeBody(n)); got != want {
			t.Errorf("makeBody(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStopClosesThePort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var logBuf syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, config{bodyBytes: 12}, &logBuf) }()
	for !strings.Contains(logBuf.String(), " ready\n") {
		time.Sleep(10 * time.Millisecond)
	}
	address := regexp.MustCompile(`http=(\S+)`).FindStringSubmatch(logBuf.String())[1]
	// Open connections, one idle after a request (keep-alive) and one silent, must not hold
	// the stop up beyond its grace.
	idle, err := net.Dial("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(idle), nil); err != nil {
		t.Fatal(err)
	}
	silent, err := net.Dial("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(stopGrace + 2*time.Second):
		t.Fatal("run did not return within its grace of the stop")
	}
	if conn, err := net.Dial("tcp", address); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after stop", address)
	}
}

func TestBusyPortFails(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	if err := run(context.Background(), config{httpPort: port, bodyBytes: 12}, io.Discard); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("err = %v, want a bind error", err)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-http-port", "18085", "-handler-delay", "500us", "-body-bytes", "4096"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (config{httpPort: 18085, handlerDelay: 500 * time.Microsecond, bodyBytes: 4096, address: "127.0.0.1"}); cfg != want {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg != (config{httpPort: 8085, bodyBytes: 12, address: "127.0.0.1"}) {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-http-port", "70000"}, {"extra"}, {"-body-bytes", "0"}, {"-body-bytes", "1048577"}, {"-handler-delay", "-1ms"}, {"-handler-delay", "1"},
		{"-address", "0.0.0.0"}, {"-address", "::"}, {"-address", "example.org"}, {"-address", ""}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// syncBuffer is a bytes.Buffer safe to write from the server goroutine and read in the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
