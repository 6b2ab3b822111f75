"""Tiers: hot to warm to cold, the cold Parquet store, access logs."""
