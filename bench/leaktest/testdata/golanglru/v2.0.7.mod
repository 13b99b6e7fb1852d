module example.com/proof

go 1.25.0

require github.com/memdoctor/memdoctor/leaktest v0.0.0

require github.com/hashicorp/golang-lru/v2 v2.0.7

replace github.com/memdoctor/memdoctor/leaktest => LEAKTEST_DIR
