// Command gofasthttp is the benchmark's go-fasthttp setup: a standalone
// github.com/valyala/fasthttp server answering every request like gohello does, on
// 127.0.0.1 (or the one address -address names, for a load generator on another machine;
// never every interface). It is a module of its own so that gohello stays standard-library only.
//
// The response carries exactly Server: gophr, Date, Content-Type: text/plain,
// Content-Length: 12 and Connection: keep-alive, and the body "Hello World\n", so that the
// HEAD header block is 141 bytes, as for the other setups. fasthttp's defaults would differ:
// it adds "; charset=utf-8" to a default Content-Type, names itself in Server, and writes no
// Connection header on HTTP/1.1 keep-alive; all three are set explicitly here.
// -body-bytes N makes the body N bytes of repeated "Hello World\n"; -handler-delay D makes
// the handler sleep D before answering.
//
// GOMAXPROCS comes from the environment (the Go runtime reads it); the value the runtime
// actually uses is logged at start. SIGINT or SIGTERM closes the listener and exits 0.
//
// Usage:
//
//	GOMAXPROCS=1 gofasthttp -http-port 8085 -handler-delay 1ms -body-bytes 4096
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// loopback is the address gofasthttp binds unless -address names another.
const loopback = "127.0.0.1"

// helloLine is the article's body; longer bodies repeat it, shorter ones cut it.
const helloLine = "Hello World\n"

// stopGrace is how long a stop waits for requests in flight.
const stopGrace = time.Second

// maxBodyBytes bounds -body-bytes (1 MiB), as run_bench.sh does.
const maxBodyBytes = 1 << 20

// config holds the command-line settings.
type config struct {
	httpPort     int           // port; 0 picks a free one
	handlerDelay time.Duration // sleep before answering; 0 answers at once
	bodyBytes    int           // response body size; 12 is the article's "Hello World\n"
	address      string        // the one IP address to listen on
}

// makeBody returns n bytes of repeated "Hello World\n": exactly that line when n is 12.
func makeBody(n int) []byte {
	return []byte(strings.Repeat(helloLine, n/len(helloLine)+1)[:n])
}

// newHandler returns the request handler: the article's headers and a body of bodyBytes
// bytes, after sleeping delay (if any).
func newHandler(delay time.Duration, bodyBytes int) fasthttp.RequestHandler {
	body := makeBody(bodyBytes)
	return func(ctx *fasthttp.RequestCtx) {
		if delay > 0 {
			time.Sleep(delay)
		}
		h := &ctx.Response.Header
		h.SetServer("gophr")
		h.Set("Connection", "keep-alive")
		h.SetContentType("text/plain")
		// Content-Length is written from the body's length, also on HEAD (body skipped).
		ctx.SetBody(body)
	}
}

// newServer returns the fasthttp server for cfg.
func newServer(cfg config) *fasthttp.Server {
	// No timeouts, as gohello's net/http server: connections stay open as long as wrk's.
	return &fasthttp.Server{Handler: newHandler(cfg.handlerDelay, cfg.bodyBytes)}
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("gofasthttp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{}
	fs.IntVar(&cfg.httpPort, "http-port", 8085, "port on -address (0: any free port)")
	fs.StringVar(&cfg.address, "address", loopback, "the IP address to listen on (one address, never 0.0.0.0)")
	fs.DurationVar(&cfg.handlerDelay, "handler-delay", 0, "sleep this long in the handler before answering (e.g. 1ms, 500us)")
	fs.IntVar(&cfg.bodyBytes, "body-bytes", len(helloLine), "response body size in bytes (repeated \"Hello World\\n\")")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if ip := net.ParseIP(cfg.address); ip == nil || ip.IsUnspecified() || ip.IsMulticast() {
		return cfg, fmt.Errorf("-address %q is not one unicast IP address", cfg.address)
	}
	if cfg.httpPort < 0 || cfg.httpPort > 65535 {
		return cfg, fmt.Errorf("port %d out of range 0-65535", cfg.httpPort)
	}
	if cfg.handlerDelay < 0 {
		return cfg, fmt.Errorf("-handler-delay %v is negative", cfg.handlerDelay)
	}
	if cfg.bodyBytes < 1 || cfg.bodyBytes > maxBodyBytes {
		return cfg, fmt.Errorf("-body-bytes %d out of range 1-%d", cfg.bodyBytes, maxBodyBytes)
	}
	return cfg, nil
}

// run serves until ctx is done or the listener fails, then closes it. It writes
// "gofasthttp: ... ready" to logw once the port is bound.
func run(ctx context.Context, cfg config, logw io.Writer) error {
	address := cfg.address
	if address == "" { // a config not from parseFlags: never every interface
		address = loopback
	}
	l, err := net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(cfg.httpPort)))
	if err != nil {
		return fmt.Errorf("fasthttp: %w", err)
	}
	s := newServer(cfg)
	failed := make(chan error, 1)
	go func() { failed <- s.Serve(l) }()
	fmt.Fprintf(logw, "gofasthttp: GOMAXPROCS=%d http=%s delay=%v body=%d pid=%d ready\n",
		runtime.GOMAXPROCS(0), l.Addr(), cfg.handlerDelay, cfg.bodyBytes, os.Getpid())

	select {
	case <-ctx.Done():
		// Close the listener and the idle keep-alive connections, and give requests in
		// flight a moment; connections still open after that close when the process exits.
		grace, cancel := context.WithTimeout(context.Background(), stopGrace)
		defer cancel()
		if err := s.ShutdownWithContext(grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("fasthttp: %w", err)
		}
		return nil
	case err = <-failed:
		l.Close()
		return fmt.Errorf("fasthttp: %w", err)
	}
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gofasthttp: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "gofasthttp: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "gofasthttp: stopped")
}
