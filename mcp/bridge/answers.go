package bridge

// The bridge's answers to a server's own requests (roots/list, refusals),
// bounded as the managed clients bound them (mcp.Backlog).

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"rootkeeper/mcp"
)

// answerQueue takes the bridge's answers to a stdio server's requests and
// writes them to its stdin on a goroutine of their own (run), so that the
// server's stdout is read on while its stdin is full. Answers it has not
// read count against its backlog: while the backlog is full, write waits,
// and so the server's stdout is not read; full with none drained for the
// stall limit, the server is stopped as hostile (onHostile) and every
// later write fails at once.
type answerQueue struct {
	backlog   *mcp.Backlog
	lines     chan []byte   // never fuller than the backlog: write never blocks on it
	gone      chan struct{} // closed once the server has exited
	onHostile func(error)
	hostile   atomic.Pointer[error]
}

func newAnswerQueue(limits mcp.BacklogLimits, onHostile func(error)) *answerQueue {
	b := mcp.NewBacklog(limits)
	return &answerQueue{backlog: b, lines: make(chan []byte, b.Limits().Requests), gone: make(chan struct{}), onHostile: onHostile}
}

// write queues one answer, once the backlog has room for it.
func (q *answerQueue) write(line []byte) error {
	if err := q.hostile.Load(); err != nil {
		return *err
	}
	if err := q.backlog.Wait(context.Background(), q.gone); err != nil {
		if mcp.IsHostile(err) && q.hostile.CompareAndSwap(nil, &err) {
			q.onHostile(err)
		}
		return err
	}
	q.backlog.Add(len(line))
	q.lines <- line
	return nil
}

func (q *answerQueue) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return q.write(data)
}

// run writes the queued answers to w until the queue is closed (its only
// writer, the server's reader, has ended).
func (q *answerQueue) run(w lineSink) {
	for line := range q.lines {
		w.write(line)
		q.backlog.Drain(len(line))
	}
}
