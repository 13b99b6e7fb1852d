module example.com/gorilla-sessions

go 1.26.0

require github.com/gorilla/sessions v1.1.3

require (
	github.com/gorilla/context v1.1.1 // indirect
	github.com/gorilla/securecookie v1.1.1 // indirect
)
