// Package suite is memdoctor test: every test of a module's packages checked for leaks, with
// no change to the module. For each package it builds the test binary with one more test file,
// added through go test's -overlay, whose test hands every test function of the package to
// leaktest's harness (leaktest/harness), in a workspace (GOWORK) that adds memdoctor's own
// copy of leaktest to the user's module: nothing in the user's tree is written, go.mod and
// go.sum included. It runs that test alone in the package's directory; the harness runs each
// test once as go test would, then checks it with leaktest.CheckTest and writes what it found
// as JSON lines to a file memdoctor reads as they come. A test that ends the process or runs
// past its budget is reported as such, and the process started again for the tests left.
package suite
