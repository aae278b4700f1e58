"""Tests for the test management service."""
