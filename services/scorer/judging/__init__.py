"""HEMRA judges: model-graded scores of recorded attempts (docs/judges.md)."""
