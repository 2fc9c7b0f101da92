"""The serving view: the engine's own figures from ``/metrics`` once the server is READY."""
