package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeKeyPair writes a self-signed certificate and its key (ECDSA P-256 or RSA-2048) as openssl would.
func writeKeyPair(t *testing.T, rsaKey bool) (string, string) {
	t.Helper()
	var key any
	var pub any
	if rsaKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		key, pub = k, &k.PublicKey
	} else {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		key, pub = k, &k.PublicKey
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, keyFile
}

// tlsServer starts gohello with TLS on a free port; it returns the TLS address and the stats socket.
func tlsServer(t *testing.T, version string, resumption, rsaKey bool) (string, string) {
	t.Helper()
	cert, key := writeKeyPair(t, rsaKey)
	stats := filepath.Join(t.TempDir(), "tls.sock")
	log, _ := startServer(t, config{tls: tlsSettings{cert: cert, key: key, version: version, resumption: resumption, statsSocket: stats}})
	return addr(t, log, "https"), stats
}

// stats reads the counts line from the stats socket.
func stats(t *testing.T, path string) string {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	data, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// headOverTLS sends HEAD / on a new TLS connection (resuming from cache when given) and returns the header block and the state.
func headOverTLS(t *testing.T, address string, cache tls.ClientSessionCache) (string, tls.ConnectionState) {
	t.Helper()
	conn, err := tls.Dial("tcp", address, &tls.Config{InsecureSkipVerify: true, ClientSessionCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("HEAD / HTTP/1.1\r\nHost: x\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	block := readHeaderBlock(t, bufio.NewReader(conn))
	return block, conn.ConnectionState()
}

func TestTLSHeadHeaderBlockIs141BytesAndNoALPN(t *testing.T) {
	address, _ := tlsServer(t, "1.3", false, false)
	block, state := headOverTLS(t, address, nil)
	if len(block) != 141 {
		t.Errorf("header block %d bytes, want 141: %q", len(block), block)
	}
	if state.Version != tls.VersionTLS13 || state.NegotiatedProtocol != "" || state.CurveID != tls.X25519 {
		t.Errorf("version %x, ALPN %q, group %v; want TLS 1.3, none, X25519", state.Version, state.NegotiatedProtocol, state.CurveID)
	}
}

func TestTLSResumptionCounted(t *testing.T) {
	for _, resumption := range []bool{false, true} {
		address, socket := tlsServer(t, "1.3", resumption, false)
		cache := tls.NewLRUClientSessionCache(4)
		for i := 0; i < 3; i++ {
			headOverTLS(t, address, cache)
		}
		want := "handshakes 3 resumed 0\n"
		if resumption {
			want = "handshakes 3 resumed 2\n"
		}
		if got := stats(t, socket); got != want {
			t.Errorf("resumption %v: %q, want %q", resumption, got, want)
		}
	}
}

func TestTLS12SuiteMatchesKey(t *testing.T) {
	for rsaKey, suite := range map[bool]uint16{false: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, true: tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256} {
		address, _ := tlsServer(t, "1.2", false, rsaKey)
		_, state := headOverTLS(t, address, nil)
		if state.Version != tls.VersionTLS12 || state.CipherSuite != suite {
			t.Errorf("rsa %v: version %x suite %s, want TLS 1.2 %s", rsaKey, state.Version, tls.CipherSuiteName(state.CipherSuite), tls.CipherSuiteName(suite))
		}
	}
}

func TestTLSOnThePublicAddressAndTheCountsReadBack(t *testing.T) {
	cert, key := writeKeyPair(t, false)
	socket := filepath.Join(t.TempDir(), "tls.sock")
	// 127.0.0.2 is loopback too, so a second address of this machine without a network.
	log, _ := startServer(t, config{publicAddress: "127.0.0.2", tls: tlsSettings{cert: cert, key: key, version: "1.3", statsSocket: socket}})
	public := addr(t, log, "https-public")
	if host, _, _ := net.SplitHostPort(public); host != "127.0.0.2" {
		t.Fatalf("https-public=%s, want 127.0.0.2", public)
	}
	if block, _ := headOverTLS(t, public, nil); len(block) != 141 {
		t.Errorf("header block over the public TLS listener: %d bytes, want 141", len(block))
	}
	headOverTLS(t, addr(t, log, "https"), nil)
	var out strings.Builder
	if err := readStats(socket, &out); err != nil || out.String() != "handshakes 2 resumed 0\n" {
		t.Errorf("readStats: %q, %v; want both listeners' handshakes counted", out.String(), err)
	}
	if err := readStats(filepath.Join(t.TempDir(), "none.sock"), &out); err == nil {
		t.Error("readStats of a missing socket: no error")
	}
}

func TestH2NegotiatedOnItsOwnListenerOnly(t *testing.T) {
	cert, key := writeKeyPair(t, false)
	log, _ := startServer(t, config{tls: tlsSettings{cert: cert, key: key, version: "1.3", h2: true}})
	client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for name, want := range map[string]string{"h2": "HTTP/2.0", "https": "HTTP/1.1"} {
		resp, err := client.Get("https://" + addr(t, log, name) + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Proto != want || resp.StatusCode != 200 || string(body) != "Hello World\n" {
			t.Errorf("%s: %s %d %q, want %s 200 \"Hello World\\n\"", name, resp.Proto, resp.StatusCode, body, want)
		}
	}
}

func TestH2NeedsACertificate(t *testing.T) {
	if err := checkTLS(tlsSettings{h2: true}); err == nil || !strings.Contains(err.Error(), "-h2 need -tls-cert") {
		t.Errorf("checkTLS(-h2 without -tls-cert) = %v", err)
	}
}

// TestH2OnlyOpensNoHTTPSListener: a run measuring go-h2 but not go-https (run_bench.sh --setups h2)
// gives -h2-only; go-h2 serves HTTP/2 with the handshakes counted, and no HTTP/1.1 TLS listener is bound.
func TestH2OnlyOpensNoHTTPSListener(t *testing.T) {
	cert, key := writeKeyPair(t, false)
	socket := filepath.Join(t.TempDir(), "tls.sock")
	log, _ := startServer(t, config{tls: tlsSettings{cert: cert, key: key, version: "1.3", h2: true, h2Only: true, statsSocket: socket}})
	if strings.Contains(log, "https=") || !strings.Contains(log, " tls=1.3 resumption=false") {
		t.Fatalf("log %q: want no https= listener, and the TLS settings said", log)
	}
	client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get("https://" + addr(t, log, "h2") + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Proto != "HTTP/2.0" || resp.StatusCode != 200 {
		t.Errorf("go-h2: %s %d, want HTTP/2.0 200", resp.Proto, resp.StatusCode)
	}
	if got := stats(t, socket); got != "handshakes 1 resumed 0\n" {
		t.Errorf("stats %q, want one handshake", got)
	}
}

func TestH2OnlyNeedsH2(t *testing.T) {
	if err := checkTLS(tlsSettings{cert: "/c", key: "/k", version: "1.3", h2Only: true}); err == nil || !strings.Contains(err.Error(), "-h2-only needs -h2") {
		t.Errorf("checkTLS(-h2-only without -h2) = %v", err)
	}
}
