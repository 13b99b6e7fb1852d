//go:build !linux

package main

func guardStacks() string { return "mprotect=unsupported madvise=unsupported" }
