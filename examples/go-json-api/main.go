// gojsonapi: a small JSON API that does real work per request, as a service behind nginx would.
//
// GET /products?n=50 builds n products (deterministic from n), sorts them by price, hashes each
// one's description with SHA-256 and answers them as JSON; the same request always gets the same
// bytes, so wrkreport's check (every setup must answer what the app alone answers) holds.
// Usage: gojsonapi -addr 127.0.0.1:PORT       HTTP on a TCP port (run_bench.sh --app)
//
//	gojsonapi -unix PATH                 HTTP on a Unix socket (--app-unix)
//	gojsonapi -fcgi-addr 127.0.0.1:PORT  FastCGI (net/http/fcgi) on a TCP port (--app-fcgi)
//	gojsonapi -fcgi-unix PATH            FastCGI on a Unix socket (--app-fcgi)
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/fcgi"
	"os"
	"sort"
	"strconv"
)

type product struct {
	ID     int     `json:"id"`
	Name   string  `json:"name"`
	Price  float64 `json:"price"`
	Digest string  `json:"digest"`
}

// catalogue returns n products in price order, each with the SHA-256 of its description.
func catalogue(n int) []product {
	items := make([]product, n)
	for i := range items {
		price := float64((i*7919)%1000) / 10
		description := fmt.Sprintf("product %d: a thing that costs %.2f and ships in %d days", i, price, i%9+1)
		sum := sha256.Sum256([]byte(description))
		items[i] = product{ID: i, Name: "product-" + strconv.Itoa(i), Price: price, Digest: hex.EncodeToString(sum[:])}
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].Price < items[b].Price })
	return items
}

func products(w http.ResponseWriter, r *http.Request) {
	n := 50
	if text := r.URL.Query().Get("n"); text != "" {
		found, err := strconv.Atoi(text)
		if err != nil || found < 0 || found > 10000 {
			http.Error(w, "n must be 0-10000", http.StatusBadRequest)
			return
		}
		n = found
	}
	body, err := json.Marshal(map[string]any{"count": n, "products": catalogue(n)})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on (HTTP)")
	unix := flag.String("unix", "", "a Unix socket to serve HTTP on instead")
	fcgiAddr := flag.String("fcgi-addr", "", "a TCP address to serve FastCGI on instead")
	fcgiUnix := flag.String("fcgi-unix", "", "a Unix socket to serve FastCGI on instead")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/products", products)
	network, address, serve := "tcp", *addr, func(l net.Listener) error { return http.Serve(l, mux) }
	switch {
	case *unix != "":
		network, address = "unix", *unix
	case *fcgiAddr != "":
		address, serve = *fcgiAddr, func(l net.Listener) error { return fcgi.Serve(l, mux) }
	case *fcgiUnix != "":
		network, address, serve = "unix", *fcgiUnix, func(l net.Listener) error { return fcgi.Serve(l, mux) }
	}
	if network == "unix" {
		_ = os.Remove(address) // one left by an earlier run: listening would fail on it
	}
	listener, err := net.Listen(network, address)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("gojsonapi listening on %s %s", network, address)
	log.Fatal(serve(listener))
}
