// Command gohello is the Go half of the nginx-in-front-of-Go benchmark: one process that
// serves the same hello-world handler over net/http on TCP and (optionally) on a Unix
// socket, FastCGI on TCP and FastCGI on a Unix socket at once, on 127.0.0.1 (and, with
// -public-address, net/http also on that one address of the machine, for a load generator
// on another machine; never on every interface).
//
// The handler sets exactly Server: gophr, Connection: keep-alive, Content-Type: text/plain
// and Content-Length: 12 and writes "Hello World\n", so that the HEAD header block is 141
// bytes whether the client talks to Go directly or through nginx (which swaps
// "Server: gophr" for "Server: nginx", same length). -body-bytes N makes the body N bytes
// of repeated "Hello World\n" (Content-Length then has as many digits as N);
// -handler-delay D makes the handler sleep D before answering (a stand-in for real work).
//
// GOMAXPROCS comes from the environment (the Go runtime reads it); the value the runtime
// actually uses is logged at start. SIGINT or SIGTERM closes the listeners, removes the
// socket and exits 0.
//
// Usage:
//
//	GOMAXPROCS=1 gohello -http-port 8080 -fcgi-port 9001 -fcgi-socket /tmp/x/go.sock \
//	    -http-socket /tmp/x/gohttp.sock -socket-mode 0660 -socket-group nogroup \
//	    -handler-delay 1ms -body-bytes 4096
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"os"
	"os/signal"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// loopback is the only address gohello ever binds.
const loopback = "127.0.0.1"

// helloLine is the article's body; longer bodies repeat it, shorter ones cut it.
const helloLine = "Hello World\n"

// maxBodyBytes bounds -body-bytes (1 MiB), as run_bench.sh does.
const maxBodyBytes = 1 << 20

// config holds the command-line settings.
type config struct {
	httpPort       int           // net/http port; 0 picks a free one
	fcgiPort       int           // FastCGI TCP port; 0 picks a free one
	socketPath     string        // FastCGI Unix socket; "" disables it
	httpSocketPath string        // net/http Unix socket; "" disables it
	socketMode     os.FileMode   // permissions set on each socket right after it is created
	socketGroup    string        // group name or numeric gid given to the sockets; "" keeps ours
	handlerDelay   time.Duration // sleep before answering; 0 answers at once
	bodyBytes      int           // response body size; 12 is the article's "Hello World\n"
	publicAddress  string        // a second net/http listener at this address and httpPort; "" none
	tls            tlsSettings   // go-https: the handler over crypto/tls (tls.go); off without -tls-cert
}

// makeBody returns n bytes of repeated "Hello World\n": exactly that line when n is 12.
func makeBody(n int) []byte {
	return []byte(strings.Repeat(helloLine, n/len(helloLine)+1)[:n])
}

// newHandler returns the handler answering every request with the article's headers and a
// body of bodyBytes bytes, after sleeping delay (if any).
func newHandler(delay time.Duration, bodyBytes int) http.Handler {
	body := makeBody(bodyBytes)
	length := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if delay > 0 {
			time.Sleep(delay)
		}
		h := w.Header()
		h.Set("Server", "gophr")
		h.Set("Connection", "keep-alive")
		h.Set("Content-Type", "text/plain")
		h.Set("Content-Length", length)
		// On HEAD the server discards the body (net/http returns ErrBodyNotAllowed): ignored.
		_, _ = w.Write(body)
	})
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("gohello", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{}
	mode := "0600"
	fs.IntVar(&cfg.httpPort, "http-port", 8080, "net/http port on "+loopback+" (0: any free port)")
	fs.IntVar(&cfg.fcgiPort, "fcgi-port", 9001, "FastCGI TCP port on "+loopback+" (0: any free port)")
	fs.StringVar(&cfg.socketPath, "fcgi-socket", "", "FastCGI Unix socket path (empty: no socket)")
	fs.StringVar(&cfg.httpSocketPath, "http-socket", "", "net/http Unix socket path (empty: no socket)")
	fs.StringVar(&mode, "socket-mode", mode, "octal permissions of the sockets")
	fs.StringVar(&cfg.socketGroup, "socket-group", "", "group (name or gid) of the sockets (empty: unchanged)")
	fs.DurationVar(&cfg.handlerDelay, "handler-delay", 0, "sleep this long in the handler before answering (e.g. 1ms, 500us)")
	fs.IntVar(&cfg.bodyBytes, "body-bytes", len(helloLine), "response body size in bytes (repeated \"Hello World\\n\")")
	fs.StringVar(&cfg.publicAddress, "public-address", "", "also serve net/http on this IP address, same port (empty: 127.0.0.1 only)")
	fs.IntVar(&cfg.tls.port, "tls-port", 8443, "TLS (go-https) port on "+loopback+" (0: any free port); needs -tls-cert")
	fs.StringVar(&cfg.tls.cert, "tls-cert", "", "PEM certificate for the TLS listener (empty: no TLS)")
	fs.StringVar(&cfg.tls.key, "tls-key", "", "PEM private key of -tls-cert")
	fs.StringVar(&cfg.tls.version, "tls-version", "1.3", "the one TLS version offered: 1.3 or 1.2")
	fs.BoolVar(&cfg.tls.resumption, "tls-resumption", false, "allow session resumption (tickets); off: every connection a full handshake")
	fs.BoolVar(&cfg.tls.h2, "h2", false, "serve go-h2 too: the TLS settings above, offering h2 (HTTP/2) then http/1.1 by ALPN; needs -tls-cert")
	fs.IntVar(&cfg.tls.h2Port, "h2-port", 8446, "go-h2's port on "+loopback+" (0: any free port)")
	fs.BoolVar(&cfg.tls.h2Only, "h2-only", false, "serve go-h2 without go-https: no HTTP/1.1 TLS listener (-tls-port unused); needs -h2")
	fs.StringVar(&cfg.tls.statsSocket, "tls-stats-socket", "", "Unix socket answering \"handshakes N resumed M\" (empty: none)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := checkPublicAddress(cfg.publicAddress); err != nil {
		return cfg, err
	}
	if err := checkTLS(cfg.tls); err != nil {
		return cfg, err
	}
	for _, p := range []int{cfg.httpPort, cfg.fcgiPort} {
		if p < 0 || p > 65535 {
			return cfg, fmt.Errorf("port %d out of range 0-65535", p)
		}
	}
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil || m > 0o777 {
		return cfg, fmt.Errorf("-socket-mode %q is not an octal mode like 0660", mode)
	}
	cfg.socketMode = os.FileMode(m)
	if cfg.handlerDelay < 0 {
		return cfg, fmt.Errorf("-handler-delay %v is negative", cfg.handlerDelay)
	}
	if cfg.bodyBytes < 1 || cfg.bodyBytes > maxBodyBytes {
		return cfg, fmt.Errorf("-body-bytes %d out of range 1-%d", cfg.bodyBytes, maxBodyBytes)
	}
	if cfg.socketPath != "" && cfg.socketPath == cfg.httpSocketPath {
		return cfg, fmt.Errorf("-fcgi-socket and -http-socket are both %q", cfg.socketPath)
	}
	return cfg, nil
}

// checkPublicAddress refuses an address that is not one IP address of this machine's kind:
// empty is fine (none), 0.0.0.0 and :: would listen on every interface.
func checkPublicAddress(address string) error {
	if address == "" {
		return nil
	}
	ip := net.ParseIP(address)
	if ip == nil || ip.IsUnspecified() || ip.IsMulticast() {
		return fmt.Errorf("-public-address %q is not one unicast IP address", address)
	}
	return nil
}

// lookupGID returns the numeric gid of a group given by name or number.
func lookupGID(group string) (int, error) {
	if gid, err := strconv.Atoi(group); err == nil {
		return gid, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(g.Gid)
}

// listenSocket creates a Unix socket at path, then gives it the configured group and mode.
// Until then it has the creator's umask mode, which grants no one else write (= connect)
// access.
func listenSocket(path string, cfg config) (net.Listener, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if cfg.socketGroup != "" {
		gid, err := lookupGID(cfg.socketGroup)
		if err == nil {
			err = os.Chown(path, -1, gid)
		}
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("socket group %q: %w", cfg.socketGroup, err)
		}
	}
	if err := os.Chmod(path, cfg.socketMode); err != nil {
		l.Close()
		return nil, fmt.Errorf("socket mode: %w", err)
	}
	return l, nil
}

// server is the set of listeners one gohello process serves.
type server struct {
	handler   http.Handler
	http      *http.Server
	httpL     net.Listener
	httpPub   net.Listener // -public-address: net/http for a client on another machine
	httpUnix  net.Listener
	fcgiTCP   net.Listener
	fcgiUnix  net.Listener
	https     *http.Server // go-https (tls.go)
	httpsL    net.Listener
	httpsPub  net.Listener // -public-address: go-https for a client on another machine
	h2        *http.Server // go-h2: net/http's HTTP/2 over TLS (tls.go listenH2)
	h2L       net.Listener
	h2Pub     net.Listener // -public-address: go-h2 for a client on another machine
	statsL    net.Listener // the handshake counts (tls.go)
	tlsCounts tlsCounts
}

// listen binds every configured listener, or none: on error the ones already bound are closed.
func listen(cfg config) (*server, error) {
	handler := newHandler(cfg.handlerDelay, cfg.bodyBytes)
	s := &server{handler: handler, http: &http.Server{Handler: handler}}
	var err error
	if s.httpL, err = net.Listen("tcp", net.JoinHostPort(loopback, strconv.Itoa(cfg.httpPort))); err != nil {
		return nil, fmt.Errorf("net/http: %w", err)
	}
	if cfg.publicAddress != "" {
		port := strconv.Itoa(s.httpL.Addr().(*net.TCPAddr).Port) // the same port, even when 0 picked it
		if s.httpPub, err = net.Listen("tcp", net.JoinHostPort(cfg.publicAddress, port)); err != nil {
			s.close()
			return nil, fmt.Errorf("net/http on %s: %w", cfg.publicAddress, err)
		}
	}
	if s.fcgiTCP, err = net.Listen("tcp", net.JoinHostPort(loopback, strconv.Itoa(cfg.fcgiPort))); err != nil {
		s.close()
		return nil, fmt.Errorf("FastCGI TCP: %w", err)
	}
	if cfg.socketPath != "" {
		if s.fcgiUnix, err = listenSocket(cfg.socketPath, cfg); err != nil {
			s.close()
			return nil, fmt.Errorf("FastCGI Unix socket: %w", err)
		}
	}
	if cfg.httpSocketPath != "" {
		if s.httpUnix, err = listenSocket(cfg.httpSocketPath, cfg); err != nil {
			s.close()
			return nil, fmt.Errorf("net/http Unix socket: %w", err)
		}
	}
	if err = s.listenTLS(cfg); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close closes every listener; closing a Unix listener Go created also removes its file.
func (s *server) close() {
	for _, h := range []*http.Server{s.http, s.https, s.h2} {
		if h != nil {
			h.Close()
		}
	}
	for _, l := range []net.Listener{s.httpL, s.httpPub, s.httpUnix, s.fcgiTCP, s.fcgiUnix, s.httpsL, s.httpsPub, s.h2L, s.h2Pub, s.statsL} {
		if l != nil {
			l.Close()
		}
	}
}

// describe returns the log line announcing what is served where.
func (s *server) describe(cfg config) string {
	parts := []string{
		fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0)),
		"http=" + s.httpL.Addr().String(),
		"fcgi-tcp=" + s.fcgiTCP.Addr().String(),
	}
	if s.httpPub != nil {
		parts = append(parts, "http-public="+s.httpPub.Addr().String())
	}
	if s.fcgiUnix != nil {
		parts = append(parts, "fcgi-unix="+cfg.socketPath)
	}
	if s.httpUnix != nil {
		parts = append(parts, "http-unix="+cfg.httpSocketPath)
	}
	if s.httpsL != nil {
		parts = append(parts, "https="+s.httpsL.Addr().String()+" tls="+cfg.tls.version+" resumption="+strconv.FormatBool(cfg.tls.resumption))
		if s.httpsPub != nil {
			parts = append(parts, "https-public="+s.httpsPub.Addr().String())
		}
	}
	if s.h2L != nil {
		parts = append(parts, "h2="+s.h2L.Addr().String())
		if s.httpsL == nil { // -h2-only: the TLS settings are said here
			parts = append(parts, "tls="+cfg.tls.version+" resumption="+strconv.FormatBool(cfg.tls.resumption))
		}
		if s.h2Pub != nil {
			parts = append(parts, "h2-public="+s.h2Pub.Addr().String())
		}
	}
	if s.fcgiUnix != nil || s.httpUnix != nil {
		parts = append(parts, fmt.Sprintf("mode=%04o group=%q", cfg.socketMode, cfg.socketGroup))
	}
	parts = append(parts, fmt.Sprintf("delay=%v body=%d pid=%d", cfg.handlerDelay, cfg.bodyBytes, os.Getpid()))
	return strings.Join(parts, " ")
}

// run serves until ctx is done or a listener fails, then closes everything and removes the
// sockets. It writes "gohello: ... ready" to logw once every listener is bound.
func run(ctx context.Context, cfg config, logw io.Writer) error {
	s, err := listen(cfg)
	if err != nil {
		return err
	}
	failed := make(chan error, 10) // one per listener served
	serve := func(name string, f func() error) {
		go func() {
			if err := f(); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
				failed <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	serve("net/http", func() error { return s.http.Serve(s.httpL) })
	if s.httpPub != nil {
		serve("net/http public", func() error { return s.http.Serve(s.httpPub) })
	}
	serve("FastCGI TCP", func() error { return fcgi.Serve(s.fcgiTCP, s.handler) })
	if s.fcgiUnix != nil {
		serve("FastCGI Unix socket", func() error { return fcgi.Serve(s.fcgiUnix, s.handler) })
	}
	if s.httpUnix != nil {
		serve("net/http Unix socket", func() error { return s.http.Serve(s.httpUnix) })
	}
	if s.httpsL != nil {
		serve("net/http TLS", func() error { return s.https.Serve(s.httpsL) })
	}
	if s.httpsPub != nil {
		serve("net/http TLS public", func() error { return s.https.Serve(s.httpsPub) })
	}
	if s.h2L != nil {
		serve("net/http HTTP/2", func() error { return s.h2.Serve(s.h2L) })
	}
	if s.h2Pub != nil {
		serve("net/http HTTP/2 public", func() error { return s.h2.Serve(s.h2Pub) })
	}
	if s.statsL != nil {
		serve("TLS stats socket", s.serveStats)
	}
	fmt.Fprintf(logw, "gohello: %s ready\n", s.describe(cfg))

	select {
	case <-ctx.Done():
		err = nil
	case err = <-failed:
	}
	s.close()
	for _, path := range []string{cfg.socketPath, cfg.httpSocketPath, cfg.tls.statsSocket} {
		if path == "" {
			continue
		}
		if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
			err = rmErr
		}
	}
	return err
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == readStatsFlag { // run_bench.sh on a --server-host target: the counts there
		if err := readStats(os.Args[2], os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "gohello: %v\n", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gohello: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "gohello: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "gohello: stopped")
}
