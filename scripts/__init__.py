"""Tooling that materializes framework checkouts and applies the runguard patch series to them."""
