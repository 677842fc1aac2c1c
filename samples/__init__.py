"""Deterministic, intentionally messy sample data for exercising the tunegate pipeline."""
