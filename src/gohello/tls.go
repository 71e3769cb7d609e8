// TLS for the go-https setup: the same handler over crypto/tls on 127.0.0.1, with the
// protocol version, cipher suite, key exchange group and session resumption fixed from the
// command line (run_bench.sh gives nginx the same), and the handshakes counted.
//
// The counts (handshakes, and how many of them resumed a session) are served as one text
// line, "handshakes N resumed M", to anyone connecting to the -tls-stats-socket Unix socket
// in the run's private directory: the driver reads them before and after each measurement.
package main

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// tlsSettings are the -tls-* flags.
type tlsSettings struct {
	port        int    // TLS port on 127.0.0.1 (0: any free port)
	cert        string // PEM certificate; "" disables TLS
	key         string // PEM private key
	version     string // "1.3" or "1.2": the only version offered
	resumption  bool   // session tickets on (off: every connection is a full handshake)
	statsSocket string // Unix socket serving the handshake counts; "" none
	h2          bool   // go-h2: a second TLS listener offering h2 (HTTP/2) by ALPN, then http/1.1
	h2Port      int    // its port on 127.0.0.1 (0: any free port)
	h2Only      bool   // go-h2 alone: no go-https listener (a run measuring go-h2 but not go-https)
}

// tlsCounts counts the TLS handshakes the server completed up to verification, and the resumed ones.
type tlsCounts struct {
	handshakes atomic.Int64
	resumed    atomic.Int64
}

// line returns the counts as the stats socket serves them.
func (c *tlsCounts) line() string {
	return fmt.Sprintf("handshakes %d resumed %d\n", c.handshakes.Load(), c.resumed.Load())
}

// checkTLS refuses inconsistent -tls-* flags.
func checkTLS(s tlsSettings) error {
	if s.cert == "" {
		if s.key != "" || s.statsSocket != "" || s.h2 || s.h2Only {
			return errors.New("-tls-key, -tls-stats-socket, -h2-only and -h2 need -tls-cert")
		}
		return nil
	}
	if s.h2Only && !s.h2 {
		return errors.New("-h2-only needs -h2: without go-https and go-h2 no TLS listener is left")
	}
	if s.key == "" {
		return errors.New("-tls-cert needs -tls-key")
	}
	if s.version != "1.2" && s.version != "1.3" {
		return fmt.Errorf("-tls-version %q: choose 1.2 or 1.3", s.version)
	}
	for _, port := range []int{s.port, s.h2Port} {
		if port < 0 || port > 65535 {
			return fmt.Errorf("port %d out of range 0-65535", port)
		}
	}
	return nil
}

// tlsConfig returns the server's TLS configuration: one version, X25519 only, and for TLS 1.2
// the one AES-128-GCM suite matching the key (TLS 1.3 suites are not configurable in Go; it
// prefers TLS_AES_128_GCM_SHA256 on machines with AES instructions, which nginx is given).
// No ALPN protocols are offered: wrk speaks HTTP/1.1 (go-h2's listener adds h2: listenH2).
func tlsConfig(s tlsSettings, counts *tlsCounts) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(s.cert, s.key)
	if err != nil {
		return nil, fmt.Errorf("TLS key pair: %w", err)
	}
	cfg := &tls.Config{
		Certificates:           []tls.Certificate{pair},
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		CurvePreferences:       []tls.CurveID{tls.X25519},
		SessionTicketsDisabled: !s.resumption,
		VerifyConnection: func(state tls.ConnectionState) error {
			counts.handshakes.Add(1)
			if state.DidResume {
				counts.resumed.Add(1)
			}
			return nil
		},
	}
	if s.version == "1.2" {
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		switch pair.PrivateKey.(type) {
		case *ecdsa.PrivateKey:
			cfg.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
		case *rsa.PrivateKey:
			cfg.CipherSuites = []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}
		default:
			return nil, fmt.Errorf("TLS key %s: neither ECDSA nor RSA", s.key)
		}
	}
	return cfg, nil
}

// listenTLS binds go-https's listener and its HTTP server (HTTP/2 off: no h2 in ALPN) unless
// -h2-only, go-h2's (listenH2), and the stats socket.
func (s *server) listenTLS(cfg config) error {
	if cfg.tls.cert == "" {
		return nil
	}
	tc, err := tlsConfig(cfg.tls, &s.tlsCounts)
	if err != nil {
		return err
	}
	if err := s.listenHTTPS(cfg, tc); err != nil {
		return err
	}
	if err := s.listenH2(cfg, tc); err != nil {
		return err
	}
	if cfg.tls.statsSocket != "" {
		if s.statsL, err = listenSocket(cfg.tls.statsSocket, cfg); err != nil {
			return fmt.Errorf("TLS stats socket: %w", err)
		}
	}
	return nil
}

// listenHTTPS binds go-https's listener (HTTP/1.1 over TLS) unless -h2-only: a run that
// measures go-h2 alone opens no listener no setup of it uses.
func (s *server) listenHTTPS(cfg config, tc *tls.Config) error {
	if cfg.tls.h2Only {
		return nil
	}
	raw, err := net.Listen("tcp", net.JoinHostPort(loopback, fmt.Sprint(cfg.tls.port)))
	if err != nil {
		return fmt.Errorf("TLS: %w", err)
	}
	s.httpsL = tls.NewListener(raw, tc)
	if cfg.publicAddress != "" { // the load generator on another machine (--server-host)
		pub, err := net.Listen("tcp", net.JoinHostPort(cfg.publicAddress, fmt.Sprint(s.httpsL.Addr().(*net.TCPAddr).Port)))
		if err != nil {
			return fmt.Errorf("TLS on %s: %w", cfg.publicAddress, err)
		}
		s.httpsPub = tls.NewListener(pub, tc)
	}
	s.https = &http.Server{Handler: s.handler, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	return nil
}

// listenH2 binds go-h2's listener when -h2 is given: the same TLS settings (version, group,
// key, resumption, counted handshakes) offering h2 then http/1.1 by ALPN, served by an
// http.Server whose Serve sets up net/http's own HTTP/2 (TLSNextProto left nil).
func (s *server) listenH2(cfg config, tc *tls.Config) error {
	if !cfg.tls.h2 {
		return nil
	}
	h2 := tc.Clone()
	h2.NextProtos = []string{"h2", "http/1.1"}
	raw, err := net.Listen("tcp", net.JoinHostPort(loopback, fmt.Sprint(cfg.tls.h2Port)))
	if err != nil {
		return fmt.Errorf("HTTP/2: %w", err)
	}
	s.h2L = tls.NewListener(raw, h2)
	if cfg.publicAddress != "" {
		pub, err := net.Listen("tcp", net.JoinHostPort(cfg.publicAddress, fmt.Sprint(s.h2L.Addr().(*net.TCPAddr).Port)))
		if err != nil {
			return fmt.Errorf("HTTP/2 on %s: %w", cfg.publicAddress, err)
		}
		s.h2Pub = tls.NewListener(pub, h2)
	}
	s.h2 = &http.Server{Handler: s.handler}
	return nil
}

// readStatsFlag makes gohello a client of a running gohello's stats socket: `gohello
// -read-tls-stats SOCKET` prints its line, so a target without other tools can read it.
const readStatsFlag = "-read-tls-stats"

// readStats copies the line of the stats socket at path to w.
func readStats(path string, w io.Writer) error {
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	_, err = io.Copy(w, conn)
	return err
}

// serveStats answers every connection to the stats socket with the counts, then closes it.
func (s *server) serveStats() error {
	for {
		conn, err := s.statsL.Accept()
		if err != nil {
			return err
		}
		_, _ = conn.Write([]byte(s.tlsCounts.line()))
		conn.Close()
	}
}
