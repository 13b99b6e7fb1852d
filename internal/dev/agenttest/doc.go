// Package agenttest tests the agent's module (github.com/memdoctor/memdoctor/agent) with
// what that module may not import, not even in its tests, so that its graph stays the
// standard library alone: pprof's profile parser, goleak, and a Go 1.27 toolchain
// (internal/dev/gotool). It holds no code of its own.
package agenttest
