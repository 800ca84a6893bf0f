"""The scorer service: runs a task's verifier in the attempt's sandbox and reads its rewards."""
