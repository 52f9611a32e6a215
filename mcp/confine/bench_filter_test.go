package confine

import "testing"

// BenchmarkFilterProgram is what building the filter costs the confining
// child at every start of a confined server.
func BenchmarkFilterProgram(b *testing.B) {
	for b.Loop() {
		if _, err := filterProgram(archX86_64, filterMode{abi: 7, observed: true}); err != nil {
			b.Fatal(err)
		}
	}
}
