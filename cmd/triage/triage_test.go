package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/testutil"
)

// replayCorpus is a handful of cases the three engines agree on everywhere
// (measured here: a replay of Chromium's own dumps passes them all), with P
// boxes for the planted defect to hit.
const replayCorpus = `{"id":"fixed-blocks","html":"<!doctype html><style>html,body{margin:0}</style><div style=\"width:100px;height:50px\"></div><div style=\"width:200px;height:30px;margin-left:10px\"></div>"}
{"id":"p-sized","html":"<!doctype html><style>html,body{margin:0}</style><p style=\"margin:0;height:20px;width:50px\"></p><div style=\"height:10px\"></div>"}
{"id":"p-twice","html":"<!doctype html><style>html,body{margin:0} p{margin:4px 0;height:12px}</style><div><p></p><p style=\"width:30px\"></p></div>"}
{"id":"p-in-box","html":"<!doctype html><style>html,body{margin:0}</style><div style=\"padding:5px;border:1px solid\"><p style=\"margin:2px;height:7px\"></p></div><span style=\"display:block;height:3px\"></span>"}
{"id":"scripted","html":"<div></div>","script":"1"}
`

// buildOracle builds bin/oracle for the tests into dir.
func buildOracle(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "oracle")
	out, err := exec.Command("go", "build", "-o", bin, "../oracle").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// writeCorpus writes ndjson, the corpus's lines, to dir/corpus.ndjson and returns
// its path.
func writeCorpus(t *testing.T, dir, ndjson string) string {
	t.Helper()
	corpus := filepath.Join(dir, "corpus.ndjson")
	require.NoError(t, os.WriteFile(corpus, []byte(ndjson), 0o644))
	return corpus
}

// replayServer answers a case's HTML (the POST body) with Chromium's own dump of
// it from an oracle of the test's (one engine), changed by plant while planted is
// set: a candidate that is a copy of one engine, reached with curl.
func replayServer(t *testing.T, oracleBin string, planted *atomic.Bool, plant func(tag string, h *float64)) *httptest.Server {
	t.Helper()
	c, err := client.Spawn(context.Background(), oracleBin, []string{"--store=off", "--engines=chromium", "--pages=1"}, client.Options{CloseTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html, _ := io.ReadAll(r.Body)
		resp, err := c.Do(r.Context(), client.Request{HTML: client.Str(string(html))})
		if err == nil {
			err = resp.Err()
		}
		if err != nil || resp.Dumps["chromium"] == nil {
			http.Error(w, fmt.Sprint(err, resp), http.StatusInternalServerError)
			return
		}
		d := resp.Dumps["chromium"]
		d.Engine = "replay"
		if planted.Load() {
			for i := range d.Nodes {
				n := &d.Nodes[i]
				plant(n.Tag, &n.Bounding.H)
				for j := range n.Rects {
					plant(n.Tag, &n.Rects[j].H)
				}
			}
		}
		json.NewEncoder(w).Encode(d)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Triage's targets against the real engines: a candidate that is a copy of
// Chromium's dumps passes with 0 buckets (and a rerun is answered from the store);
// the same with every P 3px taller gives exactly one top bucket, naming P and
// bounding.h, reduced and reproduced in a fresh oracle and candidate run.
func TestTriageOfAReplayedEngine(t *testing.T) {
	testutil.NeedsBrowsers(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	dir := t.TempDir()
	oracleBin := buildOracle(t, dir)
	corpus := writeCorpus(t, dir, replayCorpus)
	store := filepath.Join(dir, "store.db")
	common := []string{"--oracle", oracleBin, "--oracle-flag=--store=" + store, "--oracle-flag=--pages=1", "--parallel=2"}
	var planted atomic.Bool
	srv := replayServer(t, oracleBin, &planted, func(tag string, h *float64) {
		if tag == "P" {
			*h += 3
		}
	})

	t.Run("copy", func(t *testing.T) {
		out := filepath.Join(dir, "copy")
		var stdout, stderr bytes.Buffer
		code := run(append(common, "--candidate-cmd", "curl -sf --data-binary @- "+srv.URL, "--out", out, corpus), &stdout, &stderr)
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		require.Equal(t, exitOK, code)
		assert.Contains(t, stdout.String(), "cases 4: 4 pass")
		assert.Contains(t, stderr.String(), "skipped 1 scripted or non-geometry cases")
		assert.Contains(t, stderr.String(), "the candidate runs in the pinned environment (pinned-")
		var buckets []json.RawMessage
		b, err := os.ReadFile(filepath.Join(out, "buckets.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &buckets))
		assert.Empty(t, buckets)
		for _, f := range []string{"oracle.ndjson", "candidate.ndjson"} {
			b, err := os.ReadFile(filepath.Join(out, f))
			require.NoError(t, err)
			assert.Equal(t, 4, bytes.Count(b, []byte("\n")), f)
		}

		// A rerun measures only what is new: every answer comes from the store.
		stdout.Reset()
		stderr.Reset()
		code = run(append(common, "--candidate-cmd", "curl -sf --data-binary @- "+srv.URL, "--out", out, corpus), &stdout, &stderr)
		require.Equal(t, exitOK, code, "%s", stderr.String())
		assert.Contains(t, stdout.String(), "(4 answered from the store)")
	})

	t.Run("planted", func(t *testing.T) {
		planted.Store(true)
		out := filepath.Join(dir, "planted")
		var stdout, stderr bytes.Buffer
		code := run(append(common, "--reduce=1", "--reduce-timeout=3m", "--candidate-cmd", "curl -sf --data-binary @- "+srv.URL, "--out", out, corpus), &stdout, &stderr)
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		require.Equal(t, exitFail, code)
		var buckets []struct {
			Signature       Signature  `json:"signature"`
			Cases           []string   `json:"cases"`
			Items           int        `json:"items"`
			Representative  string     `json:"representative"`
			AgreeingEngines []string   `json:"agreeing_engines"`
			Variants        []*Variant `json:"variants"`
			Reduced         *struct {
				HTML          string   `json:"html"`
				Bytes         int      `json:"bytes"`
				Reproduced    bool     `json:"reproduced"`
				OtherFailures []string `json:"other_failures"`
				Page          string   `json:"page"`
			} `json:"reduced"`
		}
		b, err := os.ReadFile(filepath.Join(out, "buckets.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &buckets))
		require.Len(t, buckets, 1, "one defect, one bucket: %s", b)
		top := buckets[0]
		assert.Equal(t, "layout", top.Signature.Kind)
		assert.Equal(t, "P", top.Signature.Tag)
		assert.Equal(t, []string{"bounding.h"}, top.Signature.Props, "bounding.h, rects[0].h: the box's height")
		assert.Equal(t, "+", top.Signature.Sign)
		assert.Equal(t, []string{}, top.AgreeingEngines, "no engine has the planted P")
		require.Len(t, top.Variants, 1)
		assert.ElementsMatch(t, []string{"p-sized", "p-twice", "p-in-box"}, top.Cases)
		cases, _, err := readCorpus([]string{corpus})
		require.NoError(t, err)
		smallest := ""
		for _, c := range cases[1:] { // the cases with a P
			if smallest == "" || len(c.html) < len(cases[slicesIndex(cases, smallest)].html) {
				smallest = c.id
			}
		}
		assert.Equal(t, smallest, top.Representative, "the smallest case")
		require.NotNil(t, top.Reduced)
		assert.True(t, top.Reduced.Reproduced)
		assert.Empty(t, top.Reduced.OtherFailures)
		assert.Contains(t, strings.ToLower(top.Reduced.HTML), "<p")
		assert.Less(t, top.Reduced.Bytes*4, len(cases[slicesIndex(cases, smallest)].html), "at most 25%% of the representative")
		index, err := os.ReadFile(filepath.Join(out, "index.html"))
		require.NoError(t, err)
		assert.Contains(t, string(index), "layout P bounding.h &#43;", "html/template escapes the +")
		assert.Contains(t, string(index), "<td>bounding.h</td>", "the values table names the item")
		assert.Contains(t, string(index), "none (the candidate alone against all three)")
		assert.Contains(t, string(index), "reduced/cases/000001.html")
		assert.FileExists(t, filepath.Join(out, "reduced", "cases", "000001.html"))
		assert.Equal(t, "reduced/cases/000001.html", top.Reduced.Page, "buckets.json names the reduced case's page")
	})
}

func slicesIndex(cs []tcase, id string) int {
	for i, c := range cs {
		if c.id == id {
			return i
		}
	}
	return -1
}
