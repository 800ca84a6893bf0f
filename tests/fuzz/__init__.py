"""The property-based fuzz suite (issue 31): every parser and every request a caller can send,
fed Hypothesis-built input that starts from a valid document or request and changes one thing.
Each input ends in success or the one-line refusal, and the store still reads afterwards.

The "ci" profile (the default) runs a bounded, derandomized number of examples; HEMRA_FUZZ=long
(`make fuzz`) runs many more, with fresh random draws each time (tests/fuzz/conftest.py)."""
