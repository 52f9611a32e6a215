//go:build rootkeeper_policytest

package policy

import "os"

// A test binary built with the tag rootkeeper_policytest reads its policy
// from ROOTKEEPER_TEST_POLICY_FILE, so that tests need not write the
// machine's own file; Rootkeeper as built for people has no such seam.
func init() {
	if p := os.Getenv("ROOTKEEPER_TEST_POLICY_FILE"); p != "" {
		location = p
		parentsChecked = false
	}
}
