package agent

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testToken = "s3cret-token-0123456789"

func TestTokenMatches(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"Bearer " + testToken, true},
		{"bearer " + testToken, true},
		{"Bearer  " + testToken + " ", true},
		{"Bearer " + testToken + "x", false},
		{"Bearer " + testToken[:len(testToken)-1], false},
		{"Basic " + testToken, false},
		{testToken, false},
		{"Bearer", false},
		{"", false},
	} {
		if got := tokenMatches(tc.header, testToken); got != tc.want {
			t.Errorf("tokenMatches(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
	if tokenMatches("Bearer ", "") {
		t.Error("an empty token matched an empty header")
	}
}

func TestHandlerRequiresTheToken(t *testing.T) {
	a, err := Start(context.Background(), WithToken(testToken), WithSampleInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		auth string
		code int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong-token-0123456789", http.StatusUnauthorized},
		{"Bearer " + testToken, http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/debug/memdoctor/", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, resp.StatusCode, tc.code)
		}
		if tc.code == http.StatusUnauthorized && (resp.Header.Get("WWW-Authenticate") == "" || strings.Contains(string(body), `"pid"`)) {
			t.Errorf("a 401 without WWW-Authenticate, or with data: %s", body)
		}
	}
}

func TestListenAndServe(t *testing.T) {
	a, err := Start(context.Background(), WithSampleInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())

	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:0"} {
		if err := ListenAndServe(context.Background(), a, addr); !errors.Is(err, ErrNeedToken) {
			t.Errorf("ListenAndServe(%s) without a token: %v, want ErrNeedToken", addr, err)
		}
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := Serve(context.Background(), a, ln); !errors.Is(err, ErrNeedToken) {
		t.Errorf("Serve on 0.0.0.0 without a token: %v", err)
	}

	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, a, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/debug/memdoctor/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("loopback without a token: %d", resp.StatusCode)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after its context ended: %v", err)
	}
}

func TestAddresses(t *testing.T) {
	for in, want := range map[string]string{"": DefaultAddr, ":7000": "127.0.0.1:7000", "0.0.0.0:7000": "0.0.0.0:7000", "[::1]:7000": "[::1]:7000"} {
		if got, err := loopbackDefault(in); err != nil || got != want {
			t.Errorf("loopbackDefault(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := loopbackDefault("7000"); err == nil {
		t.Error("a bare port was accepted")
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "127.1.2.3:1": true, "[::1]:1": true, "localhost:1": true, "[::ffff:127.0.0.1]:1": true,
		"0.0.0.0:1": false, "[::]:1": false, "10.0.0.1:1": false, "example.com:1": false, "nonsense": false} {
		if got := isLoopbackAddr(addr); got != want {
			t.Errorf("isLoopbackAddr(%s) = %v", addr, got)
		}
	}
}
