module github.com/memdoctor/memdoctor/bench/leaktest

go 1.25.0
