// Package layers holds the test that keeps memdoctor's layers apart (TestLayers): it reads
// the imports of every package of the module (no build) and checks that each package imports
// only its own layer and those below it, that a leaf imports nothing of memdoctor's, and that
// nothing below the top floor, tests included, imports internal/ but internal/dev. The table of
// layers is in layers_test.go and, in words, in docs/development.md. It holds no code of its
// own.
package layers
