"""The reports service: reports made apart from API requests (``docs/contexts/reports.md``)."""
