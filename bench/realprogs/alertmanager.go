package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

const (
	alertGroups = 10
	alertPeriod = 200 * time.Millisecond
)

// alertmanagerConfig routes everything to a receiver with no integrations, grouped by
// alertname, flushing new groups at once: every group of resolved alerts is flushed, emptied
// and destroyed within milliseconds.
const alertmanagerConfig = `route:
  receiver: "null"
  group_by: ["alertname"]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: "null"
`

func setupAlertmanager(work string) (*launch, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(work, "alertmanager.yml")
	if err := os.WriteFile(cfg, []byte(alertmanagerConfig), 0o644); err != nil {
		return nil, err
	}
	api := localURL(port, "/api/v2/alerts")
	return &launch{
		args: []string{"--config.file=" + cfg, "--storage.path=" + filepath.Join(work, "data"),
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--cluster.listen-address=", "--log.level=warn"},
		pprof: localURL(port, "/debug/pprof/"),
		load: func(ctx context.Context) string {
			n, err := resolvedAlerts(ctx, api, alertGroups, alertPeriod)
			s := fmt.Sprintf("%d posts of %d resolved alerts", n, alertGroups)
			if err != nil {
				s += fmt.Sprintf(" (last error: %v)", err)
			}
			return s
		},
	}, nil
}

// postableAlert is an alert as Alertmanager's API v2 takes it.
type postableAlert struct {
	Labels   map[string]string `json:"labels"`
	StartsAt time.Time         `json:"startsAt"`
	EndsAt   time.Time         `json:"endsAt"`
}

// resolvedAlerts posts one resolved alert for each of groups alert names every period and
// returns how many posts were accepted.
func resolvedAlerts(ctx context.Context, api string, groups int, period time.Duration) (int, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(period)
	defer tick.Stop()
	var posted int
	var lastErr error
	for {
		select {
		case <-ctx.Done():
			return posted, lastErr
		case <-tick.C:
		}
		body, err := json.Marshal(resolvedBatch(groups, time.Now()))
		if err != nil {
			return posted, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api, bytes.NewReader(body))
		if err != nil {
			return posted, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				lastErr = err
			}
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			lastErr = fmt.Errorf("status %s", resp.Status)
			continue
		}
		posted++
	}
}

// resolvedBatch is one alert per group, started 10 s before now and resolved at now.
func resolvedBatch(groups int, now time.Time) []postableAlert {
	batch := make([]postableAlert, groups)
	for i := range batch {
		batch[i] = postableAlert{
			Labels:   map[string]string{"alertname": fmt.Sprintf("realprogs-%d", i), "job": "realprogs"},
			StartsAt: now.Add(-10 * time.Second).UTC(),
			EndsAt:   now.UTC(),
		}
	}
	return batch
}
