"""Test management: plans, groups, cycles and runs."""
