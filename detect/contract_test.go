package detect_test

import (
	"context"
	"testing"

	"rootkeeper/app"
	"rootkeeper/detect"
)

// TestContract fails to compile when detect's types drift from app's: main
// converts between them with plain type conversions.
func TestContract(t *testing.T) {
	var scanner app.Scanner = func(ctx context.Context, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
		sum, err := new(detect.Scanner).Scan(ctx, detect.Request(req),
			func(c detect.Candidate) { found(app.Candidate(c)) },
			func(p detect.Progress) { progress(app.ScanProgress(p)) })
		return app.ScanSummary(sum), err
	}
	var got []app.Candidate
	if _, err := scanner(context.Background(), app.ScanRequest{Dirs: []string{"."}}, func(c app.Candidate) { got = append(got, c) }, func(app.ScanProgress) {}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("the detect package folder holds no project, got %v", got)
	}
}
