// Command server serves PHP over HTTP through FrankenPHP's Go module
// (github.com/dunglas/frankenphp): its SAPI named "frankenphp", its pool of PHP
// threads and its worker mode, behind net/http. FrankenPHP's own binary is its
// Caddy module (github.com/dunglas/frankenphp/caddy), which the Go module proxy
// here does not serve; what runs PHP (the SAPI, the threads, the worker loop) is
// the same code, configured through the library's options instead of a Caddyfile.
//
// Requests under /worker/ go to the worker script (-worker), the rest run the
// file they name under -root, each as a PHP request of its own (classic mode).
// It prints "listening ADDR" once PHP has started, and stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dunglas/frankenphp"
)

// pairs is a repeatable KEY=VALUE flag.
type pairs map[string]string

func (p pairs) String() string { return fmt.Sprint(map[string]string(p)) }

func (p pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	p[k] = v
	return nil
}

// workerName names the one worker to FrankenPHP.
const workerName = "app"

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	root := flag.String("root", ".", "document root")
	threads := flag.Int("threads", 16, "PHP threads in all (num_threads), the worker's included")
	worker := flag.String("worker", "", "worker script serving /worker/ (worker mode)")
	workerNum := flag.Int("worker-num", 0, "threads running the worker script (num)")
	ini := pairs{}
	flag.Var(ini, "ini", "php.ini directive KEY=VALUE (repeatable)")
	env := pairs{}
	flag.Var(env, "worker-env", "variable KEY=VALUE of the worker script's $_SERVER (repeatable)")
	flag.Parse()
	if err := run(*listen, *root, *threads, *worker, *workerNum, ini, env); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run(listen, root string, threads int, worker string, workerNum int, ini, env pairs) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	opts := []frankenphp.Option{
		frankenphp.WithNumThreads(threads),
		frankenphp.WithPhpIni(ini),
		frankenphp.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))),
	}
	if worker != "" {
		if worker, err = filepath.Abs(worker); err != nil {
			return err
		}
		opts = append(opts, frankenphp.WithWorkers(workerName, worker, workerNum, frankenphp.WithWorkerEnv(env)))
	}
	if err := frankenphp.Init(opts...); err != nil {
		return fmt.Errorf("starting PHP: %w", err)
	}
	defer frankenphp.Shutdown()

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ropts := []frankenphp.RequestOption{frankenphp.WithRequestDocumentRoot(root, false)}
		if worker != "" && strings.HasPrefix(r.URL.Path, "/worker/") {
			ropts = append(ropts, frankenphp.WithWorkerName(workerName))
		}
		req, err := frankenphp.NewRequestWithContext(r, ropts...)
		if err == nil {
			err = frankenphp.ServeHTTP(w, req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Printf("listening %s\n", ln.Addr())

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case err := <-done:
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
