package main

import (
	"os"

	"github.com/memdoctor/memdoctor/internal/cli"
)

func main() {
	cli.LimitMemory(os.Getenv, os.Args[1:])
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
