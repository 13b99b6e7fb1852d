//go:build withpprof

package main

import (
	"net"
	"net/http"
	_ "net/http/pprof"
)

func servePprof() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, nil)
	return ln.Addr().String()
}
