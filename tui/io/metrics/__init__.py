"""The engine's Prometheus ``/metrics``: parsed into plain samples and scraped through the
forward while the server serves."""
