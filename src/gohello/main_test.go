package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// wantHeaders are the headers the handler must set, exactly.
var wantHeaders = map[string]string{
	"Server":         "gophr",
	"Connection":     "keep-alive",
	"Content-Type":   "text/plain",
	"Content-Length": "12",
}

// body is the article's response body, the default.
const body = "Hello World\n"

func TestHandlerSetsArticleHeadersAndBody(t *testing.T) {
	hello := newHandler(0, len(body))
	for _, method := range []string{"GET", "HEAD", "POST"} {
		rec := httptest.NewRecorder()
		hello.ServeHTTP(rec, httptest.NewRequest(method, "/any/path?q=1", nil))
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d, want 200", method, rec.Code)
		}
		for k, v := range wantHeaders {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s: header %s = %q, want %q", method, k, got, v)
			}
		}
		if len(rec.Header()) != len(wantHeaders) {
			t.Errorf("%s: headers %v, want exactly %v", method, rec.Header(), wantHeaders)
		}
		if method != "HEAD" && rec.Body.String() != "Hello World\n" {
			t.Errorf("%s: body %q, want %q", method, rec.Body.String(), "Hello World\n")
		}
	}
}

func TestMakeBody(t *testing.T) {
	for n, want := range map[int]string{1: "H", 12: body, 13: body + "H", 30: body + body + "Hello "} {
		if got := string(makeBody(n)); got != want {
			t.Errorf("makeBody(%d) = %q, want %q", n, got, want)
		}
	}
	if got := len(makeBody(4096)); got != 4096 {
		t.Errorf("makeBody(4096) has %d bytes", got)
	}
}

func TestHandlerBodyBytesAndDelay(t *testing.T) {
	h := newHandler(20*time.Millisecond, 4096)
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("answered after %v, want at least the 20ms delay", waited)
	}
	if got := rec.Header().Get("Content-Length"); got != "4096" {
		t.Errorf("Content-Length %q, want 4096", got)
	}
	if !bytes.Equal(rec.Body.Bytes(), makeBody(4096)) {
		t.Errorf("body of %d bytes is not makeBody(4096)", rec.Body.Len())
	}
}

// startServer runs gohello on free ports and sockets in a temp dir; it stops at test end.
func startServer(t *testing.T, cfg config) (string, config) {
	t.Helper()
	if cfg.socketPath == "" {
		cfg.socketPath = filepath.Join(t.TempDir(), "go.sock")
	}
	if cfg.httpSocketPath == "" {
		cfg.httpSocketPath = filepath.Join(t.TempDir(), "gohttp.sock")
	}
	if cfg.bodyBytes == 0 {
		cfg.bodyBytes = len(body)
	}
	if cfg.socketMode == 0 {
		cfg.socketMode = 0o600
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
	return logBuf.String(), cfg
}

// addr returns the address logged for key (http= or fcgi-tcp=).
func addr(t *testing.T, log, key string) string {
	t.Helper()
	m := regexp.MustCompile(key + `=(\S+)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no %s in log %q", key, log)
	}
	return m[1]
}

func TestLogNamesGOMAXPROCSAndLoopbackAddresses(t *testing.T) {
	log, _ := startServer(t, config{})
	if !regexp.MustCompile(`^gohello: GOMAXPROCS=[1-9][0-9]* http=127\.0\.0\.1:[0-9]+ fcgi-tcp=127\.0\.0\.1:[0-9]+ fcgi-unix=\S+ http-unix=\S+ mode=0600 group="" delay=0s body=12 pid=[0-9]+ ready\n$`).MatchString(log) {
		t.Errorf("log line %q", log)
	}
}

// TestPublicAddressServesNetHTTPThereToo: -public-address adds net/http on that address and
// the same port, while 127.0.0.1 keeps serving it (nginx's upstream); FastCGI stays loopback.
func TestPublicAddressServesNetHTTPThereToo(t *testing.T) {
	log, _ := startServer(t, config{publicAddress: "127.0.0.2"})
	local, public := addr(t, log, "http"), addr(t, log, "http-public")
	_, localPort, _ := net.SplitHostPort(local)
	if public != net.JoinHostPort("127.0.0.2", localPort) {
		t.Fatalf("public listener %s, want 127.0.0.2 on the port of %s", public, local)
	}
	for _, a := range []string{local, public} {
		resp, err := http.Get("http://" + a + "/")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != body {
			t.Errorf("%s answered %q", a, got)
		}
	}
	if !strings.HasPrefix(addr(t, log, "fcgi-tcp"), "127.0.0.1:") {
		t.Errorf("FastCGI left loopback: %s", log)
	}
}

func TestHTTPHeadHeaderBlockIs141Bytes(t *testing.T) {
	log, cfg := startServer(t, config{})
	for _, target := range [][2]string{{"tcp", addr(t, log, "http")}, {"unix", cfg.httpSocketPath}} {
		block := headHeaderBlock(t, target[0], target[1])
		if len(block) != 141 {
			t.Errorf("%s: HEAD header block is %d bytes, want 141:\n%s", target[0], len(block), block)
		}
		if !strings.HasPrefix(block, "HTTP/1.1 200 OK\r\n") {
			t.Errorf("%s: status line: %q", target[0], block)
		}
		for k, v := range wantHeaders {
			if !strings.Contains(block, "\r\n"+k+": "+v+"\r\n") {
				t.Errorf("%s: missing %s: %s in %q", target[0], k, v, block)
			}
		}
	}
}

func TestBodyBytesChangeOnlyContentLength(t *testing.T) {
	log, _ := startServer(t, config{bodyBytes: 4096})
	block := headHeaderBlock(t, "tcp", addr(t, log, "http"))
	if len(block) != 143 || !strings.Contains(block, "\r\nContent-Length: 4096\r\n") {
		t.Errorf("HEAD header block with -body-bytes 4096 is %d bytes, want 143:\n%s", len(block), block)
	}
}

// headHeaderBlock sends HEAD / as curl -sI does and returns the response's header block.
func headHeaderBlock(t *testing.T, network, address string) string {
	t.Helper()
	conn, err := net.Dial(network, address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	return readHeaderBlock(t, bufio.NewReader(conn))
}

func TestHTTPGetAnyPath(t *testing.T) {
	log, _ := startServer(t, config{})
	resp, err := http.Get("http://" + addr(t, log, "http") + "/some/where")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != body {
		t.Errorf("GET: %d %q", resp.StatusCode, b)
	}
}

// readHeaderBlock reads up to and including the blank line ending the headers.
func readHeaderBlock(t *testing.T, r *bufio.Reader) string {
	t.Helper()
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

func TestFastCGIOverTCPAndUnixSocket(t *testing.T) {
	log, cfg := startServer(t, config{socketMode: 0o660})
	for _, target := range [][2]string{{"tcp", addr(t, log, "fcgi-tcp")}, {"unix", cfg.socketPath}} {
		stdout := fcgiGet(t, target[0], target[1])
		if !strings.HasPrefix(stdout, "Status: 200 OK\r\n") {
			t.Errorf("%s: stdout %q", target[0], stdout)
		}
		for k, v := range wantHeaders {
			if !strings.Contains(stdout, "\r\n"+k+": "+v+"\r\n") {
				t.Errorf("%s: missing %s: %s in %q", target[0], k, v, stdout)
			}
		}
		if !strings.HasSuffix(stdout, "\r\n\r\n"+body) {
			t.Errorf("%s: body not at end of %q", target[0], stdout)
		}
	}
}

func TestSocketModeAndGroupAreApplied(t *testing.T) {
	gid := os.Getgid()
	_, cfg := startServer(t, config{socketMode: 0o660, socketGroup: strconv.Itoa(gid)})
	for _, path := range []string{cfg.socketPath, cfg.httpSocketPath} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o660 {
			t.Errorf("%s: mode %v, want socket 0660", path, fi.Mode())
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Gid) != gid {
			t.Errorf("%s: gid %d, want %d", path, st.Gid, gid)
		}
	}
}

func TestStopRemovesSockets(t *testing.T) {
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "go.sock"), filepath.Join(dir, "gohttp.sock")}
	ctx, cancel := context.WithCancel(context.Background())
	var logBuf syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{socketPath: paths[0], httpSocketPath: paths[1], socketMode: 0o600, bodyBytes: 12}, &logBuf)
	}()
	for !strings.Contains(logBuf.String(), " ready\n") {
		time.Sleep(10 * time.Millisecond)
	}
	for _, path := range paths {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("socket missing while serving: %v", err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, path := range paths {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("socket %s still there after stop: %v", path, err)
		}
	}
}

func TestBusyPortFailsAndLeavesNoSocket(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	path := filepath.Join(t.TempDir(), "go.sock")
	port := busy.Addr().(*net.TCPAddr).Port
	err = run(context.Background(), config{fcgiPort: port, socketPath: path, socketMode: 0o600}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "FastCGI TCP") {
		t.Errorf("err = %v, want a FastCGI TCP bind error", err)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Errorf("socket left behind: %v", statErr)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-http-port", "18080", "-fcgi-port", "19001", "-fcgi-socket", "/x/go.sock", "-http-socket", "/x/gohttp.sock",
		"-socket-mode", "0660", "-socket-group", "nogroup", "-handler-delay", "500us", "-body-bytes", "4096"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{httpPort: 18080, fcgiPort: 19001, socketPath: "/x/go.sock", httpSocketPath: "/x/gohttp.sock", socketMode: 0o660,
		socketGroup: "nogroup", handlerDelay: 500 * time.Microsecond, bodyBytes: 4096, tls: tlsSettings{port: 8443, version: "1.3", h2Port: 8446}}
	if cfg != want {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.bodyBytes != 12 || cfg.handlerDelay != 0 {
		t.Errorf("defaults: %+v, %v; want body 12, no delay", cfg, err)
	}
	for _, bad := range [][]string{{"-socket-mode", "rw"}, {"-http-port", "70000"}, {"extra"}, {"-body-bytes", "0"},
		{"-body-bytes", "1048577"}, {"-handler-delay", "-1ms"}, {"-handler-delay", "1"}, {"-fcgi-socket", "/s", "-http-socket", "/s"},
		{"-public-address", "0.0.0.0"}, {"-public-address", "::"}, {"-public-address", "host"}, {"-tls-cert", "/c"},
		{"-tls-key", "/k"}, {"-tls-cert", "/c", "-tls-key", "/k", "-tls-version", "1.1"}, {"-tls-stats-socket", "/s"},
		{"-h2-only"}, {"-tls-cert", "/c", "-tls-key", "/k", "-h2-only"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// fcgiGet sends one FastCGI GET / request and returns the concatenated FCGI_STDOUT.
func fcgiGet(t *testing.T, network, address string) string {
	t.Helper()
	conn, err := net.DialTimeout(network, address, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	const id = 1
	var params bytes.Buffer
	for _, kv := range [][2]string{{"REQUEST_METHOD", "GET"}, {"SERVER_PROTOCOL", "HTTP/1.1"}, {"REQUEST_URI", "/"}, {"HTTP_HOST", "go.fcgi"}} {
		params.WriteByte(byte(len(kv[0])))
		params.WriteByte(byte(len(kv[1])))
		params.WriteString(kv[0] + kv[1])
	}
	writeRecord(t, conn, 1, id, []byte{0, 1, 0, 0, 0, 0, 0, 0}) // BEGIN_REQUEST, role responder
	writeRecord(t, conn, 4, id, params.Bytes())                 // PARAMS
	writeRecord(t, conn, 4, id, nil)
	writeRecord(t, conn, 5, id, nil) // STDIN, empty
	var out strings.Builder
	r := bufio.NewReader(conn)
	for {
		var h [8]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			t.Fatalf("reading record: %v (stdout so far %q)", err, out.String())
		}
		content := make([]byte, binary.BigEndian.Uint16(h[4:6]))
		padding := make([]byte, h[6])
		io.ReadFull(r, content)
		io.ReadFull(r, padding)
		switch h[1] {
		case 6: // STDOUT
			out.Write(content)
		case 3: // END_REQUEST
			return out.String()
		}
	}
}

func writeRecord(t *testing.T, w io.Writer, kind byte, id uint16, content []byte) {
	t.Helper()
	h := []byte{1, kind, byte(id >> 8), byte(id), byte(len(content) >> 8), byte(len(content)), 0, 0}
	if _, err := w.Write(append(h, content...)); err != nil {
		t.Fatal(err)
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
