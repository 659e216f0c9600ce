"""Issue #19's findings, each as a test that failed before the fix (an attacker's or a clumsy user's view)."""
