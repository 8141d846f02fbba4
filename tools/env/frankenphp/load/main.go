// Command load sends -n GET requests over -c keep-alive connections, spread over
// the URLs given in turn (a URL given twice gets twice the share), and prints
//
//	requests N ok N failed N seconds S per_second R
//	url URL ok N
//
// then up to 5 failures (status and body). Its exit status is 0 whatever the
// replies: the caller judges them.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "requests in all")
	c := flag.Int("c", 32, "concurrent connections")
	timeout := flag.Duration("timeout", 30*time.Second, "one request's time limit")
	flag.Parse()
	urls := flag.Args()
	if len(urls) == 0 || *n < 1 || *c < 1 {
		fmt.Fprintln(os.Stderr, "usage: load [-n N] [-c C] URL...")
		os.Exit(2)
	}
	client := &http.Client{
		Timeout:   *timeout,
		Transport: &http.Transport{MaxIdleConns: *c, MaxIdleConnsPerHost: *c, DisableCompression: true},
	}
	// Replies are tallied per distinct URL.
	slot := make([]int, len(urls))
	var distinct []string
	seen := map[string]int{}
	for i, u := range urls {
		if _, found := seen[u]; !found {
			seen[u] = len(distinct)
			distinct = append(distinct, u)
		}
		slot[i] = seen[u]
	}
	var next atomic.Int64
	ok := make([]atomic.Int64, len(distinct))
	var mu sync.Mutex
	var failures []string
	fail := func(s string) {
		mu.Lock()
		failures = append(failures, s)
		mu.Unlock()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range *c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= *n {
					return
				}
				u := i % len(urls)
				resp, err := client.Get(urls[u])
				if err != nil {
					fail(err.Error())
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					fail(err.Error())
				case resp.StatusCode != http.StatusOK:
					fail(fmt.Sprintf("%s: HTTP %d %q", urls[u], resp.StatusCode, body))
				default:
					ok[slot[u]].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	var total int64
	for i := range ok {
		total += ok[i].Load()
	}
	fmt.Printf("requests %d ok %d failed %d seconds %.2f per_second %.0f\n", *n, total, len(failures), secs, float64(*n)/secs)
	for i, u := range distinct {
		fmt.Printf("url %s ok %d\n", u, ok[i].Load())
	}
	for i, f := range failures {
		if i == 5 {
			break
		}
		fmt.Printf("failure %s\n", f)
	}
}
