"""Tests for the attachments service."""
