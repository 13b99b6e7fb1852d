module example.com/proof

go 1.25.0

require (
	github.com/lestrrat-go/backoff/v2 v2.0.8
	github.com/memdoctor/memdoctor/leaktest v0.0.0
)

require github.com/lestrrat-go/option v1.0.0 // indirect

replace github.com/memdoctor/memdoctor/leaktest => LEAKTEST_DIR
