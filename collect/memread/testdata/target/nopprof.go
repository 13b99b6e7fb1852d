//go:build !withpprof

package main

func servePprof() string { return "-" }
