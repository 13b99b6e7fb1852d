module github.com/memdoctor/memdoctor/leaktest

go 1.25.0
