package supervise

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

// A loop that fails, returns nil early or panics is started again, each
// failure is reported, and once it runs for Healthy it counts as recovered.
func TestRunRestartsAndReports(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var starts atomic.Int32
	var mu sync.Mutex
	var fails []string
	recovered := make(chan struct{})
	loop := func(ctx context.Context) error {
		switch starts.Add(1) {
		case 1:
			return errors.New("watcher closed")
		case 2:
			return nil
		case 3:
			panic("boom")
		}
		<-ctx.Done()
		return ctx.Err()
	}
	done := make(chan struct{})
	go func() {
		Run(ctx, loop, Options{Min: time.Millisecond, Max: 5 * time.Millisecond, Healthy: 50 * time.Millisecond,
			OnFail: func(err error, n int, _ time.Duration) {
				mu.Lock()
				fails = append(fails, err.Error())
				mu.Unlock()
			},
			OnRecover: func() { close(recovered) },
		})
		close(done)
	}()
	select {
	case <-recovered:
	case <-time.After(apptest.Patience):
		t.Fatal("the loop never recovered (hung?)")
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if starts.Load() != 4 || len(fails) != 3 {
		t.Fatalf("starts %d, failures %q", starts.Load(), fails)
	}
	for i, want := range []string{"watcher closed", "stopped by itself", "panic: boom"} {
		if !strings.HasPrefix(fails[i], want) {
			t.Errorf("failure %d = %q, want %q", i, fails[i], want)
		}
	}
}

func TestBackoffIsBoundedAndGrows(t *testing.T) {
	for attempt := range 40 {
		d := Backoff(time.Second, time.Minute, attempt)
		want := min(time.Second<<min(attempt, 20), time.Minute)
		if d < want/2 || d > want {
			t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, want/2, want)
		}
	}
}
