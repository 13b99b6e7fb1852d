// Package leaktestproof tests the leaktest module (github.com/memdoctor/memdoctor/leaktest)
// with what that module may not use, not even in its tests, so that its graph stays the
// standard library alone: the module proxy that TestLeaktestGraph publishes it into, and the
// memdoctor command whose holders a heap leak's failure runs (TestHoldersInFailure). It holds
// no code of its own. The proofs on real libraries are bench/leaktest's.
package leaktestproof
