// Command sqlite is a service whose handler opens its SQLite database with sql.Open for every
// request and, unless -fixed, never closes it. A *sql.DB is a pool meant to live as long as the
// program: database/sql starts a connectionOpener goroutine for each one.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"

	_ "modernc.org/sqlite"
)

type service struct{ fixed bool }

// balance answers one account's balance from a new in-memory database.
func (s *service) balance(ctx context.Context, id int) (int, error) {
	db, err := sql.Open("sqlite", "file:ledger?mode=memory")
	if err != nil {
		return 0, err
	}
	if s.fixed {
		defer db.Close()
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT ? * 100", id).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

func (s *service) call(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	n, err := s.balance(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, n)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	withPprof := flag.Bool("pprof", true, "serve net/http/pprof")
	fixed := flag.Bool("fixed", false, "close each database when done")
	flag.Parse()
	s := &service{fixed: *fixed}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /call/{id}", s.call)
	if *withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
