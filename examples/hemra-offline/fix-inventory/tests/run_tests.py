"""Runs the inventory unittest suite and writes /logs/verifier/reward.json.

  reward     - fraction of tests that passed (errors and failures count as failed)
  all_passed - 1.0 if every test passed, else 0.0
"""
import json
import sys
import unittest

REWARD = "/logs/verifier/reward.json"


def main():
    reward, all_passed = 0.0, 0.0
    try:
        sys.path.insert(0, "/app")
        suite = unittest.defaultTestLoader.discover("/tests", pattern="test_*.py", top_level_dir="/tests")
        result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
        total = result.testsRun
        bad = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
        if total:
            reward = round((total - bad) / total, 4)
            all_passed = 1.0 if bad == 0 and result.wasSuccessful() else 0.0
        print(f"{total - bad}/{total} tests passed")
    finally:
        with open(REWARD, "w", encoding="utf-8") as fh:
            json.dump({"reward": reward, "all_passed": all_passed}, fh)
            fh.write("\n")


if __name__ == "__main__":
    main()
