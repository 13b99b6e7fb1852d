module github.com/memdoctor/memdoctor/agent

go 1.25.0
